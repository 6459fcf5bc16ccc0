package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Under root the kernel does not apply RLIMIT_NPROC (copy_process exempts
// the host's uid 0, mapped or not), so prlimit cannot stop a fork bomb; a
// pids cgroup can. Each command of a root massgen starts in a cgroup of
// its own with pids.max set, below massgen's own pids cgroup: cgroup v2
// through clone3's CLONE_INTO_CGROUP (SysProcAttr.CgroupFD), cgroup v1 by
// starting it from an OS thread moved into the cgroup for that fork only
// (v1 places tasks by thread). Where neither can be made (no writable
// pids hierarchy), Warnings says commands run without a process limit.

type pidsCgroup struct {
	dir    string
	parent string // v1: where the forking thread goes back to
	v2     bool
}

var cgroupSeq atomic.Int64

// pidsBase is massgen's own pids cgroup directory and whether it is v2,
// or why there is none.
var pidsBase = sync.OnceValues(func() (string, error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", err
	}
	var v1Mount, v2Mount string
	for _, l := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(l)
		if len(f) < 4 {
			continue
		}
		switch {
		case f[2] == "cgroup" && hasOpt(f[3], "pids"):
			v1Mount = f[1]
		case f[2] == "cgroup2" && v2Mount == "":
			if c, err := os.ReadFile(filepath.Join(f[1], "cgroup.controllers")); err == nil && hasWord(string(c), "pids") {
				v2Mount = f[1]
			}
		}
	}
	for _, l := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case v1Mount != "" && hasOpt(parts[1], "pids"):
			return filepath.Join(v1Mount, parts[2]), nil
		case v1Mount == "" && v2Mount != "" && parts[0] == "0":
			return "v2:" + filepath.Join(v2Mount, parts[2]), nil
		}
	}
	return "", errors.New("no pids cgroup hierarchy is mounted")
})

func hasOpt(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

func hasWord(s, w string) bool {
	for _, x := range strings.Fields(s) {
		if x == w {
			return true
		}
	}
	return false
}

// needPidsCgroup says whether commands need a cgroup for their process
// limit: only when RLIMIT_NPROC would not bind them.
func needPidsCgroup() bool { return os.Geteuid() == 0 }

// newPidsCgroup makes a cgroup for one command holding at most max tasks.
func newPidsCgroup(max int) (*pidsCgroup, error) {
	base, err := pidsBase()
	if err != nil {
		return nil, err
	}
	cg := &pidsCgroup{parent: base}
	if b, ok := strings.CutPrefix(base, "v2:"); ok {
		cg.v2, cg.parent = true, b
	}
	cg.dir = filepath.Join(cg.parent, fmt.Sprintf("massgen-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(cg.dir, "pids.max"), []byte(strconv.Itoa(max)), 0o644); err != nil {
		os.Remove(cg.dir)
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	return cg, nil
}

// start starts cmd inside the cgroup.
func (cg *pidsCgroup) start(cmd *exec.Cmd) error {
	if cg.v2 {
		fd, err := unix.Open(cg.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := []byte(strconv.Itoa(unix.Gettid()))
	if err := os.WriteFile(filepath.Join(cg.dir, "tasks"), tid, 0o644); err != nil {
		return err
	}
	err := cmd.Start()
	if berr := os.WriteFile(filepath.Join(cg.parent, "tasks"), tid, 0o644); berr != nil && err == nil {
		err = berr
	}
	return err
}

// close kills what is left in the cgroup and removes it; a thread of
// massgen's that was made there while the command started goes back.
func (cg *pidsCgroup) close() {
	// The sandbox's processes are reaped a moment after bwrap exits: the
	// first tries come quickly, then up to a second in all.
	wait := 100 * time.Microsecond
	for range 50 {
		if err := os.Remove(cg.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		for _, task := range cgroupTasks(cg.dir) {
			if _, err := os.Stat(filepath.Join("/proc/self/task", task)); err == nil {
				os.WriteFile(filepath.Join(cg.parent, "tasks"), []byte(task), 0o644)
				continue
			}
			if pid, err := strconv.Atoi(task); err == nil {
				unix.Kill(pid, unix.SIGKILL)
			}
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}

func cgroupTasks(dir string) []string {
	name := "tasks"
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		name = "cgroup.procs"
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	for s := bufio.NewScanner(f); s.Scan(); {
		out = append(out, s.Text())
	}
	return out
}
