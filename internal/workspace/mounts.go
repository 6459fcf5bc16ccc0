//go:build linux

package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Mounts is the view of the policy for a command now, outermost first so
// that each later mount overrides the earlier ones below it: the same
// decisions as Access, made by the kernel's mount table instead of a
// check (a context path is bound writable only during the final
// presentation; a protected path is bound read-only over it; a hidden one
// is masked).
func (g *Guard) Mounts() []Mount { return g.mounts(g.presenter.Load()) }

func (g *Guard) mounts(final bool) []Mount {
	var out []Mount
	for _, r := range slices.Backward(g.rules) {
		m := Mount{Path: r.path}
		switch r.kind {
		case kindFileParent:
			continue // nothing is bound but the shared file
		case kindHidden:
			m.Access = None
		case kindWorkspace:
			if _, err := os.Lstat(r.path); r.file && err != nil {
				continue // a writable file deleted since: nothing to bind
			}
			m.Access = Write
		case kindProtected:
			if _, err := os.Lstat(r.path); err != nil {
				continue // nothing to bind; none can be made either (protected.go)
			}
			m.Access = Read
		default:
			m.Access = g.accessAt(r.path, final)
		}
		out = append(out, m)
	}
	if final {
		// The protected entries there are, nested .git directories and
		// placeholders included, each read-only over its writable
		// context path; placed by depth, so a deeper rule (a workspace
		// inside) still comes after.
		for _, m := range g.protectedMounts() {
			if !slices.ContainsFunc(out, func(o Mount) bool { return o.Path == m.Path }) {
				out = append(out, m)
			}
		}
		slices.SortStableFunc(out, func(a, b Mount) int { return depth(a.Path) - depth(b.Path) })
	}
	return out
}

func depth(p string) int { return strings.Count(p, string(filepath.Separator)) }

// WorkDir resolves a directory inside the agent's own workspace, for a
// command's working directory ("" is the workspace itself).
func (g *Guard) WorkDir(p string) (string, error) {
	fd, real, err := g.open("use as working directory", p, unix.O_PATH|unix.O_DIRECTORY, Read)
	if err != nil {
		return "", err
	}
	unix.Close(fd)
	if !within(real, g.workspace) {
		return "", g.refuse("use as working directory", p, real, "commands run inside your own workspace only")
	}
	return real, nil
}
