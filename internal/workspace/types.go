package workspace

import "errors"

// Entry is one name in a directory.
type Entry struct {
	Name    string
	Dir     bool
	Symlink bool
	Size    int64
}

// ErrWalkLimit ends a Walk that met more entries than its limit.
var ErrWalkLimit = errors.New("too many entries")

// Mount is one path of the file system view a sandboxed command gets.
type Mount struct {
	Path   string
	Access Access // Write: bound writable; Read: bound read-only; None: masked
}
