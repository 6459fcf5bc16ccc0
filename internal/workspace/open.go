//go:build linux

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// target is a path the model gave, located under the root that grants it.
type target struct {
	asked string
	abs   string // lexical absolute path
	root  rule
	rel   string // abs relative to root.path, without `..`
}

// locate finds the root an asked path starts from: the deepest allowed
// directory containing its lexical absolute form. When none does, the
// deepest existing ancestor is resolved through its symlinks, so an alias
// of an allowed directory (/var → /private/var) still works — while a
// symlink planted inside an allowed directory is left to the kernel.
func (g *Guard) locate(op, p string) (target, error) {
	abs := g.abs(p)
	r, ok := g.ruleFor(abs, true)
	if !ok {
		real := resolveExisting(abs)
		if r, ok = g.ruleFor(real, true); !ok {
			return target{}, g.refuse(op, p, real, fmt.Sprintf("it is outside every directory %s may touch", g.agent))
		}
		abs = real
	}
	rel, err := filepath.Rel(r.path, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return target{}, g.refuse(op, p, abs, "it cannot be expressed below an allowed directory")
	}
	return target{asked: p, abs: abs, root: r, rel: rel}, nil
}

// openRoot opens the directory of a rule for *at calls.
func openRoot(r rule) (int, error) {
	return unix.Open(r.path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
}

// open opens an asked path beneath its root with flags and checks the
// real path of what was opened against need. The caller closes fd.
func (g *Guard) open(op, p string, flags int, need Access) (fd int, real string, err error) {
	t, err := g.locate(op, p)
	if err != nil {
		return -1, "", err
	}
	rootfd, err := openRoot(t.root)
	if err != nil {
		return -1, "", fmt.Errorf("%s %q: cannot open %s: %w", op, p, t.root.path, err)
	}
	defer unix.Close(rootfd)
	fd, err = openBeneath(rootfd, t.rel, flags)
	if err != nil {
		return -1, "", g.openErr(op, t, err)
	}
	real, err = g.checkFd(op, p, fd, need)
	if err != nil {
		unix.Close(fd)
		return -1, "", err
	}
	return fd, real, nil
}

// checkFd checks the real path of an open descriptor against need.
func (g *Guard) checkFd(op, p string, fd int, need Access) (string, error) {
	real, err := fdPath(fd)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", op, p, err)
	}
	if err := g.check(op, p, real, need); err != nil {
		return "", err
	}
	return real, nil
}

// check refuses when the access at real is less than need.
func (g *Guard) check(op, p, real string, need Access) error {
	if g.Access(real) >= need {
		return nil
	}
	return g.refuse(op, p, real, g.reason(real, need))
}

// reason says why real does not grant need.
func (g *Guard) reason(real string, need Access) string {
	r, ok := g.ruleFor(real, false)
	switch {
	case !ok:
		return fmt.Sprintf("it is outside every directory %s may touch", g.agent)
	case r.kind == kindFileParent:
		return fmt.Sprintf("only single files of %s are shared, not this one", r.path)
	case r.kind == kindHidden:
		return fmt.Sprintf("%s is not visible to %s (another agent's live workspace or massgen's own files)", r.path, g.agent)
	case r.kind == kindProtected:
		return fmt.Sprintf("%s is a protected path: never writable", r.path)
	case r.kind == kindContextWrite && protectedName(r, real) && g.presenter.Load():
		return fmt.Sprintf("%s is protected in the context path %s (version control, secrets and massgen's own files are never written)", real, r.path)
	case r.kind == kindContextWrite:
		return fmt.Sprintf("the context path %s is writable only by the winner during the final presentation; now it is read-only", r.path)
	case r.kind == kindReadOnly || r.kind == kindContextRead:
		return fmt.Sprintf("%s is read-only for %s", r.path, g.agent)
	}
	return fmt.Sprintf("%s access is not granted", need)
}

// openErr turns a failed openat2 into a refusal or a plain error.
func (g *Guard) openErr(op string, t target, err error) error {
	switch {
	case errors.Is(err, unix.EXDEV):
		return g.refuse(op, t.asked, resolveExisting(t.abs),
			fmt.Sprintf("a component of the path (`..`, a symbolic link or a mount point) leads out of %s", t.root.path))
	case errors.Is(err, unix.ELOOP):
		return g.refuse(op, t.asked, resolveExisting(t.abs), "it goes through too many symbolic links or a /proc link")
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s %q: no such file or directory (looked for %s): %w", op, t.asked, t.abs, fs.ErrNotExist)
	case errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("%s %q: a component of the path is not a directory (%s)", op, t.asked, t.abs)
	}
	return fmt.Errorf("%s %q (%s): %w", op, t.asked, t.abs, err)
}

// openParent opens the directory that holds an asked path, creating the
// missing directories on the way when create is set (each one checked for
// write access before it is made). It returns the directory (O_PATH), the
// final name and the directory's real path.
func (g *Guard) openParent(op, p string, create bool) (dirfd int, name, dirReal string, err error) {
	t, err := g.locate(op, p)
	if err != nil {
		return -1, "", "", err
	}
	if t.rel == "." {
		return -1, "", "", fmt.Errorf("%s %q: %s is a directory", op, p, t.abs)
	}
	rootfd, err := openRoot(t.root)
	if err != nil {
		return -1, "", "", fmt.Errorf("%s %q: cannot open %s: %w", op, p, t.root.path, err)
	}
	defer unix.Close(rootfd)
	parent := filepath.Dir(t.rel)
	cur, err := unix.Dup(rootfd)
	if err != nil {
		return -1, "", "", err
	}
	if parent != "." {
		comps := strings.Split(parent, "/")
		for i := range comps {
			prefix := strings.Join(comps[:i+1], "/")
			fd, err := openBeneath(rootfd, prefix, unix.O_PATH|unix.O_DIRECTORY)
			if errors.Is(err, unix.ENOENT) && create {
				// Make the one missing directory inside the one
				// already opened, then open it through the kernel check.
				curReal, perr := fdPath(cur)
				if perr == nil {
					perr = g.check(op, p, filepath.Join(curReal, comps[i]), Write)
				}
				if perr != nil {
					unix.Close(cur)
					return -1, "", "", perr
				}
				if merr := unix.Mkdirat(cur, comps[i], 0o755); merr != nil && !errors.Is(merr, unix.EEXIST) {
					unix.Close(cur)
					return -1, "", "", fmt.Errorf("%s %q: making directory %s: %w", op, p, filepath.Join(curReal, comps[i]), merr)
				}
				fd, err = openBeneath(rootfd, prefix, unix.O_PATH|unix.O_DIRECTORY)
			}
			unix.Close(cur)
			if err != nil {
				return -1, "", "", g.openErr(op, t, err)
			}
			cur = fd
		}
	}
	dirReal, err = fdPath(cur)
	if err != nil {
		unix.Close(cur)
		return -1, "", "", fmt.Errorf("%s %q: %w", op, p, err)
	}
	return cur, filepath.Base(t.rel), dirReal, nil
}

// idOf names a file by device and inode.
func idOf(st *unix.Stat_t) fileID { return fileID{uint64(st.Dev), st.Ino} }

func (g *Guard) mark(set map[fileID]bool, id fileID) {
	g.mu.Lock()
	set[id] = true
	g.mu.Unlock()
}

func (g *Guard) has(set map[fileID]bool, id fileID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return set[id]
}

// fileFromFd wraps a descriptor; the *os.File owns it from now on.
func fileFromFd(fd int, name string) *os.File { return os.NewFile(uintptr(fd), name) }
