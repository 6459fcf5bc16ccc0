//go:build linux

package workspace

import (
	"errors"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Check decides, without changing anything, whether p may be used with
// need access now: for a tool that does the work itself, such as an MCP
// server, before its call. An existing path is opened (O_PATH) the way the
// guard's own operations open it, so `..`, symbolic links and mount
// points are resolved by the kernel beneath the allowed directory, and its
// real path is checked. A path that does not exist yet is judged by its
// deepest existing ancestor, opened the same way, with the rest appended.
func (g *Guard) Check(op, p string, need Access) error {
	q, rest := g.abs(p), ""
	for {
		fd, real, err := g.open(op, q, unix.O_PATH, None)
		if err == nil {
			unix.Close(fd)
			return g.check(op, p, filepath.Join(real, rest), need)
		}
		parent := filepath.Dir(q)
		if !errors.Is(err, fs.ErrNotExist) || parent == q {
			return err
		}
		rest = filepath.Join(filepath.Base(q), rest)
		q = parent
	}
}
