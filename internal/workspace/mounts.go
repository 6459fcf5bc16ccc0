//go:build linux

package workspace

import (
	"slices"

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
		default:
			m.Access = g.accessAt(r.path, final)
		}
		out = append(out, m)
	}
	return out
}

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
