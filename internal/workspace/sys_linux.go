//go:build linux

package workspace

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

func supported() error { return nil }

// openBeneath opens rel below the directory dirfd, letting the kernel
// refuse any component — `..`, an absolute symlink, a relative one climbing
// out, a /proc magic link or a mount crossing — that would leave it. The
// check and the open are one system call, so nothing can swap a component
// in between.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
	}
	for range 16 {
		fd, err := unix.Openat2(dirfd, rel, &how)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			// A concurrent rename somewhere on the system; the kernel
			// asks for a retry rather than risk a wrong answer.
			continue
		}
		return fd, err
	}
	return -1, unix.EAGAIN
}

// fdPath is the real path of an open descriptor, as the kernel knows it.
func fdPath(fd int) (string, error) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return "", err
	}
	if len(p) == 0 || p[0] != '/' {
		return "", errors.New("the file is no longer reachable by a path")
	}
	return p, nil
}

// lstatID names the file at p (not what a link there points to).
func lstatID(p string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fileID{}, false
	}
	return idOf(&st), true
}
