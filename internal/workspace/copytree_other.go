//go:build !linux

package workspace

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Outside Linux, CopyTree and WalkTree walk by path, with lstat: a link is
// never copied, but a directory swapped for one while the walk runs can be
// followed. Agents get no workspace on these systems (New refuses), so
// only massgen's own directories are copied here.

// CopyTreeWith is CopyTree with options.
func CopyTreeWith(src, dst string, o CopyOptions) (CopyStats, error) {
	var st CopyStats
	if err := os.Mkdir(dst, 0o755); err != nil {
		return st, err
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == src {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if (d.IsDir() || d.Type().IsRegular()) && o.Skip != nil && o.Skip(rel, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o755)
		case !d.Type().IsRegular():
			st.Skipped++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st.Bytes += info.Size(); o.Limit > 0 && st.Bytes > o.Limit {
			return fmt.Errorf("%s holds more than %d bytes: %w", src, o.Limit, ErrTooLarge)
		}
		st.Files++
		if o.Mode == Link {
			if err := os.Link(p, target); err == nil {
				st.Linked++
				return nil
			}
		}
		cloned, err := copyRegular(p, target, info.Mode().Perm(), o.Mode == Clone)
		if cloned {
			st.Cloned++
		}
		return err
	})
	return st, err
}

// copyRegular copies one regular file, trying a reflink first when clone
// is set.
func copyRegular(src, dst string, perm fs.FileMode, clone bool) (cloned bool, err error) {
	in, err := os.OpenFile(src, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		if isLoop(err) {
			return false, nil // became a symbolic link meanwhile: left out
		}
		return false, err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return false, err
	}
	if clone && reflink(out, in) == nil {
		return true, out.Close()
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, err
	}
	return false, out.Close()
}

// WalkTree calls fn for every entry under root, by path (see above).
func WalkTree(root string, fn func(rel string, e *TreeEntry) error) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		rel, _ := filepath.Rel(root, p)
		e := TreeEntry{Mode: info.Mode(), Size: info.Size(), ModTime: info.ModTime(), path: p}
		if d.Type()&fs.ModeSymlink != 0 {
			e.Target, _ = os.Readlink(p)
		}
		return fn(rel, &e)
	})
	if err == fs.SkipAll {
		return nil
	}
	return err
}

// Open opens a regular file WalkTree found.
func (e *TreeEntry) Open() (*os.File, error) {
	if !e.Mode.IsRegular() || e.path == "" {
		return nil, fs.ErrInvalid
	}
	f, err := os.OpenFile(e.path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errChanged
	}
	return f, nil
}
