//go:build linux

package isolate

import (
	"errors"
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

const oNoFollow = unix.O_NOFOLLOW

// place moves the directory stage (massgen's own) into the workspace ws as
// Dir/name, first moving whatever is there now into the directory old
// (massgen's own, on the same file system). Every step is relative to a directory
// descriptor opened without following links, so a process of the agent
// that swaps Dir or Dir/name for a link cannot send the copy, or the
// removal of the old one, elsewhere.
func place(ws, name, stage, old string) error {
	wsfd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open workspace %s: %w", ws, err)
	}
	defer unix.Close(wsfd)
	own, err := unix.Open(filepath.Dir(stage), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(own)
	aside, err := unix.Open(old, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(aside)
	wt, err := openDir(wsfd, Dir)
	if err != nil {
		// Missing, or something other than a directory (a link, a file):
		// whatever it is goes to old, and a directory is made.
		if err := unix.Renameat(wsfd, Dir, aside, "dir"); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("move %s aside: %w", filepath.Join(ws, Dir), err)
		}
		if err := unix.Mkdirat(wsfd, Dir, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
		if wt, err = openDir(wsfd, Dir); err != nil {
			return fmt.Errorf("open %s: %w", filepath.Join(ws, Dir), err)
		}
	}
	defer unix.Close(wt)
	for i := range 4 {
		if err := unix.Renameat(wt, name, aside, fmt.Sprint("prev", i)); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("move the last copy aside: %w", err)
		}
		err := unix.Renameat2(own, filepath.Base(stage), wt, name, unix.RENAME_NOREPLACE)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("move the copy into %s: %w", filepath.Join(ws, Dir), err)
		}
		// Something was made in its place meanwhile: move that aside too.
	}
	return fmt.Errorf("%s keeps being recreated", filepath.Join(ws, Dir, name))
}

// openDir opens name in dirfd as a directory, never through a link.
func openDir(dirfd int, name string) (int, error) {
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_XDEV}
	for range 16 {
		fd, err := unix.Openat2(dirfd, name, &how)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
	return -1, unix.EAGAIN
}
