package sandbox

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/workspace"
)

// Bwrap is the bubblewrap executable, once checked to work here, or why
// there is none.
func Bwrap() (string, error) { return findBwrap("") }

// Program rewrites cmd, a long-lived program such as an MCP server, to run
// under bubblewrap (bwrap) in the view of the agent g guards: the whole
// system read-only, the policy's mounts over it (the workspace writable,
// snapshots and read context paths read-only, protected paths read-only,
// hidden places masked), a fresh /tmp,
// the workspace as working directory, and env as its whole environment
// (massgen's own, which holds API keys, is not passed). The network is
// kept: MCP servers are often clients of a service.
//
// A server outlives the phases of a run, so its write context paths are
// bound writable (WidestMounts): the guard refuses a write there before
// the final presentation, call by call (the caller checks the arguments);
// everything else is enforced by the kernel as for commands.
func Program(bwrap string, g *workspace.Guard, cmd *exec.Cmd, env []string) {
	args := []string{"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--unshare-all", "--share-net", "--die-with-parent", "--cap-drop", "ALL", "--clearenv"}
	args = append(args, secretMasks()...)
	args = append(args, programBinds(cmd.Path)...)
	args = append(args, mountArgs(g.WidestMounts())...)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	args = append(args, "--chdir", g.Workspace(), "--")
	args = append(args, cmd.Path)
	args = append(args, cmd.Args[1:]...)
	cmd.Path = bwrap
	cmd.Args = append([]string{bwrap}, args...)
	cmd.Env = nil
	cmd.Dir = g.Workspace()
}

// programBinds keeps the program's own files visible when they live under
// /tmp, which the sandbox replaces with an empty tmpfs: a server installed
// in a project under /tmp (node_modules/.bin/… and the package its link
// points to) must still start. The top directory under /tmp that holds the
// program is bound read-only, as everything outside /tmp is; the policy's
// mounts come after it, so a workspace inside it stays writable and hidden
// places stay hidden.
func programBinds(path string) []string {
	var tops []string
	for _, p := range []string{path, resolved(path)} {
		rel, err := filepath.Rel("/tmp", p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") || !filepath.IsAbs(p) {
			continue
		}
		top := filepath.Join("/tmp", strings.Split(rel, string(filepath.Separator))[0])
		if !slices.Contains(tops, top) {
			tops = append(tops, top)
		}
	}
	var args []string
	for _, t := range tops {
		args = append(args, "--ro-bind", t, t)
	}
	return args
}

func resolved(path string) string {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path
	}
	return p
}
