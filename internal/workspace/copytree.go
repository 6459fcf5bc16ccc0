package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CopyMode is how CopyTree makes each file of the copy.
type CopyMode int

const (
	// Clone shares the data blocks where the file system can (a reflink:
	// Btrfs, XFS, overlay on those) and copies the bytes otherwise. The
	// copy is independent of the source: use it for a live workspace,
	// whose files a command may change in place.
	Clone CopyMode = iota
	// Link hard-links each file (one directory entry, no data), copying
	// across file systems. Only for sources nobody changes in place any
	// more: a snapshot.
	Link
	// Plain copies the bytes, always (the benchmark's baseline).
	Plain
)

// ErrTooLarge is returned by CopyTree when the source holds more bytes than
// the limit; the copy then holds what was copied before.
var ErrTooLarge = errors.New("larger than the size cap")

// CopyStats is what CopyTree did.
type CopyStats struct {
	Files, Linked, Cloned int
	Bytes                 int64
}

// CopyTree copies the directories and regular files under src to dst,
// which must not exist yet. Symbolic links, devices, sockets and pipes are
// left out: a snapshot must not carry a link an agent planted towards a
// place it may not read. Files are opened with O_NOFOLLOW, so one swapped
// for a link while the copy runs is skipped, not followed. limit > 0 caps
// the bytes copied (ErrTooLarge).
func CopyTree(src, dst string, mode CopyMode, limit int64) (CopyStats, error) {
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
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st.Bytes += info.Size(); limit > 0 && st.Bytes > limit {
			return fmt.Errorf("%s holds more than %d bytes: %w", src, limit, ErrTooLarge)
		}
		st.Files++
		if mode == Link {
			if err := os.Link(p, target); err == nil {
				st.Linked++
				return nil
			}
		}
		cloned, err := copyRegular(p, target, info.Mode().Perm(), mode == Clone)
		if cloned {
			st.Cloned++
		}
		return err
	})
	return st, err
}

// copyRegular copies one regular file without following a symbolic link,
// trying a reflink first when clone is set.
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
