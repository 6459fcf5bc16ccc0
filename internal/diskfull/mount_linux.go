package diskfull

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

func mount(dir, options string) error {
	return syscall.Mount("tmpfs", dir, "tmpfs", 0, options+",mode=0755")
}

func unmount(dir string) error { return syscall.Unmount(dir, syscall.MNT_DETACH) }

// runInNamespace runs test t again in a child process of the test binary,
// in a new user namespace (mapped to root) and mount namespace. It
// returns false when the child cannot be started (user namespaces
// forbidden); when it ran, a failure of the child fails t.
func runInNamespace(t testing.TB) (bool, error) {
	var pattern []string
	for _, part := range strings.Split(t.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(pattern, "/"), "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		return false, err // never started
	}
	if err != nil {
		t.Fatalf("the test, run in a user namespace to mount a tmpfs, failed: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP: "+t.Name()) {
		return false, fmt.Errorf("skipped in the user namespace too:\n%s", out)
	}
	t.Logf("ran in a user namespace (to mount a tmpfs):\n%s", out)
	return true, nil
}

// available is the space left for an unprivileged writer on dir's disk.
func available(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
