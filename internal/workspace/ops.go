//go:build linux

package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ReadFile reads a file the agent may read: at most max bytes when max > 0.
// It returns the bytes, the file's full size and its real path, and
// remembers that the agent read the file (which allows deleting it).
func (g *Guard) ReadFile(p string, max int64) (data []byte, size int64, real string, err error) {
	return g.readFile(p, max, true)
}

// Peek reads like ReadFile without counting as a read for deleting: a
// search looking through files has not made the agent aware of them.
func (g *Guard) Peek(p string, max int64) (data []byte, size int64, real string, err error) {
	return g.readFile(p, max, false)
}

func (g *Guard) readFile(p string, max int64, mark bool) (data []byte, size int64, real string, err error) {
	fd, real, err := g.open("read", p, unix.O_RDONLY|unix.O_NONBLOCK, Read)
	if err != nil {
		return nil, 0, "", err
	}
	f := fileFromFd(fd, real)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, "", fmt.Errorf("read %q: %w", p, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return nil, 0, "", fmt.Errorf("read %q: %s is a directory; list it instead", p, real)
	default:
		return nil, 0, "", g.refuse("read", p, real, "it is not a regular file (a device, pipe or socket)")
	}
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max)
	}
	data, err = io.ReadAll(r)
	if err != nil {
		return nil, 0, "", fmt.Errorf("read %q: %w", p, err)
	}
	if mark {
		g.mark(g.read, idOf(&st))
	}
	return data, st.Size, real, nil
}

// WriteFile replaces or creates a file with data, making missing parent
// directories. The bytes go to a new file in the opened parent directory,
// renamed over the target: nothing is ever written through a link. A
// symbolic link as the target is followed only while it stays under the
// same allowed directory. It returns the real path and whether the file is
// new.
func (g *Guard) WriteFile(p string, data []byte) (real string, created bool, err error) {
	return g.writeFile(p, data, 0)
}

func (g *Guard) writeFile(p string, data []byte, depth int) (string, bool, error) {
	dirfd, name, dirReal, err := g.openParent("write", p, true)
	if err != nil {
		return "", false, err
	}
	defer unix.Close(dirfd)
	real := filepath.Join(dirReal, name)
	if err := g.check("write", p, real, Write); err != nil {
		return "", false, err
	}
	var st unix.Stat_t
	mode := uint32(0o644)
	exists := false
	var wasCreated, wasRead bool
	switch err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return "", false, fmt.Errorf("write %q: %w", p, err)
	default:
		exists = true
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			if depth > 0 {
				return "", false, g.refuse("write", p, real, "it is a chain of symbolic links")
			}
			// Resolve the link beneath the same root; the kernel refuses
			// one that leaves it, and the resolved file is checked again.
			fd, lreal, err := g.open("write", p, unix.O_PATH, Write)
			if err != nil {
				return "", false, err
			}
			unix.Close(fd)
			return g.writeFile(lreal, data, depth+1)
		case unix.S_IFDIR:
			return "", false, fmt.Errorf("write %q: %s is a directory", p, real)
		case unix.S_IFREG:
			id := idOf(&st)
			wasCreated, wasRead = g.has(g.created, id), g.has(g.read, id)
			if st.Nlink > 1 && !wasCreated {
				return "", false, g.refuse("write", p, real, fmt.Sprintf(
					"it has %d hard links, so the same file may live outside what you may write; write a new file instead", st.Nlink))
			}
			mode = st.Mode & 0o7777
		default:
			return "", false, g.refuse("write", p, real, "it is not a regular file")
		}
	}
	if within(real, g.workspace) {
		old := int64(0)
		if exists && st.Mode&unix.S_IFMT == unix.S_IFREG {
			old = st.Size
		}
		if after := g.Usage() - old + int64(len(data)); after > g.maxBytes {
			return "", false, g.refuse("write", p, real, fmt.Sprintf("your workspace would hold %.1f MiB, over its limit of %.1f MiB "+
				"(workspace_max_size_mb); delete files first", float64(after)/(1<<20), float64(g.maxBytes)/(1<<20)))
		}
	}
	tmp := tempName()
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return "", false, fmt.Errorf("write %q: creating a file in %s: %w", p, dirReal, err)
	}
	f := fileFromFd(fd, filepath.Join(dirReal, tmp))
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if werr != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return "", false, fmt.Errorf("write %q: %w", p, werr)
	}
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		id := idOf(&st)
		if !exists || wasCreated {
			g.mark(g.created, id)
		}
		if wasRead {
			g.mark(g.read, id)
		}
	}
	return real, !exists, nil
}

// tempName is a fresh hidden name for a file about to be renamed.
func tempName() string {
	var b [8]byte
	rand.Read(b[:])
	return ".massgen-write-" + hex.EncodeToString(b[:])
}

// Mkdir makes a directory and its missing parents.
func (g *Guard) Mkdir(p string) (string, error) {
	dirfd, name, dirReal, err := g.openParent("create directory", p, true)
	if err != nil {
		return "", err
	}
	defer unix.Close(dirfd)
	real := filepath.Join(dirReal, name)
	if err := g.check("create directory", p, real, Write); err != nil {
		return "", err
	}
	if err := unix.Mkdirat(dirfd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return "", fmt.Errorf("create directory %q: %w", p, err)
	}
	return real, nil
}

// Remove deletes a file the agent created or read, a symbolic link (not
// what it points to) or an empty directory.
func (g *Guard) Remove(p string) (string, error) {
	dirfd, name, dirReal, err := g.openParent("delete", p, false)
	if err != nil {
		return "", err
	}
	defer unix.Close(dirfd)
	real := filepath.Join(dirReal, name)
	if err := g.check("delete", p, real, Write); err != nil {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return "", fmt.Errorf("delete %q: no such file or directory (looked for %s): %w", p, real, fs.ErrNotExist)
		}
		return "", fmt.Errorf("delete %q: %w", p, err)
	}
	flags := 0
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		flags = unix.AT_REMOVEDIR
	case unix.S_IFLNK:
	default:
		id := idOf(&st)
		if !g.has(g.created, id) && !g.has(g.read, id) {
			return "", g.refuse("delete", p, real, "you neither created nor read this file; read it first if you mean to delete it")
		}
	}
	if err := unix.Unlinkat(dirfd, name, flags); err != nil {
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return "", fmt.Errorf("delete %q: the directory %s is not empty; delete its files first", p, real)
		}
		return "", fmt.Errorf("delete %q: %w", p, err)
	}
	return real, nil
}
