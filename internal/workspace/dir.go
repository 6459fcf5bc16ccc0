//go:build linux

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// ReadDir lists a directory the agent may read, sorted by name. Hidden
// names (another agent's live workspace inside a context path, say) are
// left out.
func (g *Guard) ReadDir(p string) ([]Entry, string, error) {
	fd, real, err := g.open("list", p, unix.O_RDONLY|unix.O_DIRECTORY, Read)
	if err != nil {
		return nil, "", err
	}
	f := fileFromFd(fd, real)
	defer f.Close()
	return g.entries(fd, real)
}

// entries reads the directory fd (whose real path is real).
func (g *Guard) entries(fd int, real string) ([]Entry, string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, "", err
	}
	f := fileFromFd(dup, real)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", real, err)
	}
	slices.Sort(names)
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		if g.Access(filepath.Join(real, n)) == None {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone meanwhile
		}
		e := Entry{Name: n, Size: st.Size}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			e.Dir = true
		case unix.S_IFLNK:
			e.Symlink = true
		}
		out = append(out, e)
	}
	return out, real, nil
}

// Walk visits the tree under p in name order, calling fn with each
// entry's path relative to p. Symbolic links are reported, never
// followed; directories on another mount and hidden ones are skipped. fn
// may return fs.SkipDir for a directory. After max entries (max > 0) it
// stops with ErrWalkLimit. It returns the real path of p.
func (g *Guard) Walk(p string, max int, fn func(rel string, e Entry) error) (string, error) {
	fd, real, err := g.open("list", p, unix.O_RDONLY|unix.O_DIRECTORY, Read)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	seen := 0
	err = g.walk(fd, real, "", uint64(st.Dev), max, &seen, fn)
	if errors.Is(err, fs.SkipAll) {
		err = nil
	}
	return real, err
}

func (g *Guard) walk(fd int, real, rel string, dev uint64, max int, seen *int, fn func(string, Entry) error) error {
	ents, _, err := g.entries(fd, real)
	if err != nil {
		return err
	}
	for _, e := range ents {
		*seen++
		if max > 0 && *seen > max {
			return ErrWalkLimit
		}
		crel := filepath.Join(rel, e.Name)
		err := fn(crel, e)
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if !e.Dir {
			continue
		}
		// O_NOFOLLOW: a name swapped for a symlink since the listing is
		// refused rather than followed.
		cfd, err := unix.Openat(fd, e.Name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(cfd, &st) != nil || uint64(st.Dev) != dev {
			unix.Close(cfd)
			continue
		}
		err = g.walk(cfd, filepath.Join(real, e.Name), crel, dev, max, seen, fn)
		unix.Close(cfd)
		if err != nil {
			return err
		}
	}
	return nil
}
