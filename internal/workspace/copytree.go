package workspace

import (
	"errors"
	"io/fs"
	"time"
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

// errTooDeep is returned for a tree nested deeper than maxDepth
// directories: each level walked holds a directory descriptor open.
var errTooDeep = errors.New("nested deeper than 128 directories")

// maxDepth bounds how deep a tree is walked.
const maxDepth = 128

// CopyStats is what CopyTree did.
type CopyStats struct {
	Files, Linked, Cloned int
	Bytes                 int64
	// Skipped counts the entries left out: symbolic links, devices,
	// sockets, pipes, mount points, and entries that changed type (a
	// directory swapped for a link, say) while the copy ran.
	Skipped int
}

// CopyOptions are CopyTreeWith's.
type CopyOptions struct {
	Mode CopyMode
	// Limit > 0 caps the bytes copied (ErrTooLarge).
	Limit int64
	// Skip, when set, is asked about each directory and regular file by
	// its path relative to the source (OS separators); true leaves it out,
	// a directory with all it holds.
	Skip func(rel string, dir bool) bool
}

// CopyTree copies the directories and regular files under src to dst,
// which must not exist yet. Symbolic links, devices, sockets and pipes are
// left out: a snapshot must not carry a link an agent planted towards a
// place it may not read. limit > 0 caps the bytes copied (ErrTooLarge).
//
// The copy cannot be redirected, even by a process that changes the
// source while it runs (a command's child that outlived its call, a
// container): on Linux it walks by directory descriptors, opening each
// entry from its already-open parent with openat2(RESOLVE_NO_SYMLINKS|
// RESOLVE_NO_XDEV), so no component is ever followed through a symbolic
// link or across a mount, and each opened descriptor is checked (fstat) to
// be of the type listed and on the source's file system; anything else is
// left out (CopyStats.Skipped). The destination is built the same way, from
// descriptors of the directories the copy itself made, with O_EXCL and
// O_NOFOLLOW, so nothing planted there redirects a write. A file is copied
// as long as it was when opened: one growing meanwhile is cut at that size.
func CopyTree(src, dst string, mode CopyMode, limit int64) (CopyStats, error) {
	return CopyTreeWith(src, dst, CopyOptions{Mode: mode, Limit: limit})
}

// TreeEntry is one entry WalkTree found, as lstat describes it: a symbolic
// link is described, never followed.
type TreeEntry struct {
	Mode    fs.FileMode // type and permission bits (setuid, setgid, sticky included)
	Size    int64
	ModTime time.Time
	Target  string // a symbolic link's target
	// Mount is set for a directory that is a mount point (another file
	// system, or a bind mount of the same one): it is not entered.
	Mount bool

	// where it was found, for Open: valid during the WalkTree callback
	dirfd    int
	name     string
	path     string
	dev, ino uint64
}

// errChanged is returned by TreeEntry.Open for an entry replaced since it
// was listed.
var errChanged = errors.New("changed while the tree was walked")
