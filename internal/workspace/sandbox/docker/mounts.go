package docker

// command_line_docker_credentials' additional_mounts and pass_all_env, as
// the box applies them. The config refused system paths, the home
// directory and massgen's state by name (internal/config/dockermounts.go);
// here each mount is checked again where it resolves, and against the
// agent's view: a mount may not show what the view hides (the other
// agents' workspaces, the run's logs), may not write what the view keeps
// read-only (a read-only context path, the snapshots, a protected path),
// and may not take the place of a path of the view in the container.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/moby/api/types/mount"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// hostSystem are the directories whose binding would give the container
// the machine, wherever a mount's path resolves.
var hostSystem = []string{"/proc", "/sys", "/dev", "/boot", "/etc", "/run", "/var/run", "/var/lib/docker", "/usr", "/bin", "/sbin", "/lib", "/lib64"}

// additionalMounts are the binds of ms that g's view allows, and what the
// user should know of the others (a missing path is skipped, as upstream
// does; a refused one is named with why).
func additionalMounts(g *workspace.Guard, ms []sandbox.Mount) (binds []mount.Mount, warnings []string) {
	view := g.Mounts()
	for _, m := range ms {
		real, err := filepath.EvalSymlinks(m.Host)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("agent %s: command_line_docker_credentials additional_mounts: %s does not exist, so it is not mounted", g.Agent(), m.Host))
			continue
		}
		if why := refusedMount(real, m, view); why != "" {
			warnings = append(warnings, fmt.Sprintf("agent %s: command_line_docker_credentials additional_mounts: %s is not mounted: %s", g.Agent(), m.Host, why))
			continue
		}
		binds = append(binds, mount.Mount{Type: mount.TypeBind, Source: real, Target: m.Bind, ReadOnly: !m.Write})
	}
	return binds, warnings
}

// refusedMount says why a mount of real (m.Host resolved) is refused, or "".
func refusedMount(real string, m sandbox.Mount, view []workspace.Mount) string {
	if real == "/" {
		return "it is the whole machine"
	}
	for _, d := range hostSystem {
		if under(real, d) || under(d, real) {
			return fmt.Sprintf("it resolves to %s, which is or holds the system directory %s", real, d)
		}
	}
	if fi, err := os.Stat(real); err == nil && fi.Mode()&os.ModeSocket != 0 {
		return "it is a socket: a service of this machine"
	}
	for _, v := range view {
		switch {
		case v.Access == workspace.None && (under(real, v.Path) || under(v.Path, real)):
			return fmt.Sprintf("it shows %s, which the agent's view hides (the other agents' files, the run's logs)", v.Path)
		case m.Write && v.Access != workspace.Write && (under(real, v.Path) || under(v.Path, real)):
			return fmt.Sprintf("mode rw would make %s writable, which is read-only to the agent (a context path, the snapshots or a protected path); use mode: ro", v.Path)
		case under(m.Bind, v.Path) || under(v.Path, m.Bind):
			return fmt.Sprintf("its bind %s would cover %s of the agent's view in the container; bind it elsewhere", m.Bind, v.Path)
		}
	}
	return ""
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// allEnv is massgen's environment for pass_all_env, less what describes
// this machine's session rather than anything a command needs (its HOME,
// PATH, working directory): the container has its own.
func allEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "PATH", "PWD", "OLDPWD", "TMPDIR", "SHLVL", "_", "USER", "LOGNAME", "SHELL", "MAIL":
			continue
		}
		out = append(out, kv)
	}
	return out
}
