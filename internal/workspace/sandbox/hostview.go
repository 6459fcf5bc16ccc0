package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// The sandbox shows the system directories read-only, but a command runs
// as the user who started massgen (root in a container), so the kernel
// would let it read whatever that user may read there: private keys in
// /etc/ssl/private, a database's pg_hba.conf, the shadow files. The
// promise is narrower: of the system, a command sees only what a fresh
// unprivileged user could read. So what others may not read is masked —
// a file by an empty one, a directory by an empty tmpfs: in /etc and /opt
// (configuration and local software, where secrets live) every file and
// directory, in the distribution's trees (/usr, /lib…, /bin, /sbin:
// packaged files, world-readable by convention) every directory. One walk
// per process, made as the first Runner is (/etc and /opt take
// milliseconds, the directories of /usr a few hundred), plus identifiers
// of the machine that are world-readable but no business of a model's.

// fullyWalked are the system directories whose files are checked one by
// one; in the others only directories are.
var fullyWalked = []string{"/etc", "/opt"}

// machineIDs name this machine across runs; they are covered too.
var machineIDs = []string{"/etc/machine-id", "/var/lib/dbus/machine-id"}

// hostMasks are the bwrap arguments that cover them, computed once.
var hostMasks = sync.OnceValue(func() []string {
	var args []string
	for _, p := range privateSystemPaths(systemDirs, fullyWalked) {
		if p.dir {
			// Writes into it vanish with the sandbox, as in a hidden place.
			args = append(args, "--tmpfs", p.path)
		} else {
			args = append(args, "--ro-bind", "/dev/null", p.path)
		}
	}
	for _, f := range machineIDs {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && underSystem(f) {
			args = append(args, "--ro-bind", "/dev/null", f)
		}
	}
	return args
})

type privatePath struct {
	path string
	dir  bool
}

// privateSystemPaths walks roots (never following a link) for what others
// may not read: a directory others may not list or enter (without o+r or
// o+x), masked whole and not walked further, and, under the full roots, a
// regular file without o+r.
func privateSystemPaths(roots, full []string) []privatePath {
	var out []privatePath
	for _, root := range roots {
		files := slices.Contains(full, root)
		fi, err := os.Lstat(root)
		if err != nil || !fi.IsDir() {
			continue // a symlinked /bin is shown as a link to /usr/bin, walked there
		}
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() && path != root {
					// Unreadable even to us: nothing in it is shown either way,
					// but mask it in case the sandbox's user could.
					out = append(out, privatePath{path, true})
					return fs.SkipDir
				}
				return nil
			}
			t := d.Type()
			if t&fs.ModeSymlink != 0 || (!t.IsRegular() && !t.IsDir()) || (t.IsRegular() && !files) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			perm := info.Mode().Perm()
			switch {
			case t.IsDir() && perm&0o005 != 0o005:
				out = append(out, privatePath{path, true})
				return fs.SkipDir
			case t.IsRegular() && perm&0o004 == 0:
				out = append(out, privatePath{path, false})
			}
			return nil
		})
	}
	return out
}
