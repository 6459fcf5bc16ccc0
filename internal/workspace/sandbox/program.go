package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/massgen/massgen/internal/workspace"
)

// Bwrap is the bubblewrap executable, once checked to work here, or why
// there is none.
func Bwrap() (string, error) { return findBwrap("") }

// Program rewrites cmd, a long-lived program such as an MCP server, to run
// under bubblewrap (bwrap) in the view of the agent g guards: the system
// directories read-only as commands see them (secrets in /etc masked), the
// program's own tree read-only (programBinds), the policy's current mounts
// (the workspace writable, snapshots and context paths read-only, protected
// paths read-only, hidden places masked), a fresh /tmp, the workspace as
// working directory, and env as its whole environment (massgen's own,
// which holds API keys, is not passed). Nothing else of the host is there:
// a server cannot read a home directory through an argument the guard does
// not take for a path. The network is kept: MCP servers are often clients
// of a service.
//
// The mounts are those of the guard's phase when the program starts
// (g.Mounts): write context paths are read-only during coordination, so a
// server must be restarted to write them at the final presentation.
//
// A program that is a version manager's shim (python3 through pyenv) is
// replaced by the interpreter the shim would run here (shim.go).
//
// TCP and UDP are kept, unix sockets only with unixSockets (the config's
// command_line_allow_network): a socket file in a directory the server
// sees, or an abstract one of the host's network namespace it shares,
// would be a host service (docker.sock, an agent's) the user did not give.
func Program(bwrap string, g *workspace.Guard, cmd *exec.Cmd, env []string, unixSockets bool) {
	ProgramWith(bwrap, g, cmd, env, ProgramOptions{UnixSockets: unixSockets})
}

// ProgramOptions are what ProgramWith adds to Program's view.
type ProgramOptions struct {
	// UnixSockets: see Program.
	UnixSockets bool
	// Writable are directories outside the workspace the program may
	// write, such as a coding-agent CLI's private home (its settings and
	// sessions); each is bound at its own path.
	Writable []string
	// Net, when set, gives the program a network namespace of its own
	// whose only ways out are the Net's endpoints (net.go), in place of the
	// host's network.
	Net *Net
}

// ProgramWith is Program with options.
func ProgramWith(bwrap string, g *workspace.Guard, cmd *exec.Cmd, env []string, o ProgramOptions) {
	unixSockets := o.UnixSockets
	prog := realProgram(cmd.Path, cmd.Dir, cmd.Env)
	if prog != cmd.Path {
		env = withPathFirst(env, filepath.Dir(prog))
	}
	args := systemBinds()
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--unshare-all")
	if o.Net == nil {
		args = append(args, "--share-net")
	}
	args = append(args, "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv")
	if !unixSockets {
		// The memory file stays open in massgen until cmd is dropped (its
		// finalizer closes it): it is read once, as bwrap starts.
		if f, err := seccompFile(); err == nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, f)
			args = append(args, "--seccomp", strconv.Itoa(2+len(cmd.ExtraFiles)))
		}
	}
	args = append(args, resolverBinds()...)
	mounts := g.Mounts()
	progArgs, remounts := viewOf(prog, cmd.Args[1:]).bwrapArgs(func(p string) bool {
		return slices.ContainsFunc(mounts, func(m workspace.Mount) bool { return within(p, m.Path) })
	})
	args = append(args, progArgs...)
	args = append(args, mountArgs(mounts)...)
	for _, d := range o.Writable {
		args = append(args, "--bind", d, d)
	}
	var relay []string
	if o.Net != nil {
		// The relay is this executable, shown read-only at its own path
		// (and nothing else of its directory), after the policy's mounts
		// so none of them hides it.
		cmd.ExtraFiles = append(cmd.ExtraFiles, o.Net.inside)
		relay = o.Net.relayArgs(len(cmd.ExtraFiles))
		args = append(args, "--ro-bind", o.Net.exePath(), o.Net.exePath())
	}
	args = append(args, remounts...)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	args = append(args, "--chdir", g.Workspace(), "--")
	args = append(args, relay...)
	args = append(args, prog)
	args = append(args, cmd.Args[1:]...)
	cmd.Path = bwrap
	cmd.Args = append([]string{bwrap}, args...)
	cmd.Env = []string{} // bwrap's own: its init is pid 1 in the sandbox, /proc/1/environ readable there
	cmd.Dir = g.Workspace()
}

// interpreters run the file named in their arguments: that file's tree is
// the program's too.
var interpreters = []string{"node", "nodejs", "python", "python3", "npx", "uvx", "uv", "deno", "bun"}

// isInterpreter reports whether a program's name is an interpreter's
// (python3.11 as well as python3).
func isInterpreter(name string) bool {
	if slices.Contains(interpreters, name) {
		return true
	}
	v, ok := strings.CutPrefix(name, "python")
	return ok && v != "" && strings.Trim(v, "0123456789.") == ""
}

// programView is what the sandbox shows of a program's own files,
// read-only: the package root of the file the executable resolves to, the
// whole installation of a Python interpreter (installPrefix) and, for an
// interpreter, the package root of what each existing file among its
// arguments resolves to. The links on the way (a PATH entry's link to an
// installation's node_modules/.bin link to the package's script, a linked
// directory of nvm, Homebrew or ~/.local/bin) are made again as links,
// each where it is, in a read-only directory holding only them: the kernel
// follows every step there, and binding a link's directory would show all
// that sits beside it (the user's files next to ~/.local/bin/tool).
// Directories the sandbox already shows (system ones) need neither.
type programView struct {
	roots []string
	links []link
}

func viewOf(path string, args []string) programView {
	files := []string{resolved(path)}
	v := programView{links: linkChain(path), roots: installRoots(nil, path)}
	if isInterpreter(filepath.Base(resolved(path))) || isInterpreter(filepath.Base(path)) {
		for _, a := range args {
			if !filepath.IsAbs(a) {
				continue // relative: to the workspace, which is bound anyway
			}
			if fi, err := os.Stat(a); err == nil {
				if fi.IsDir() {
					continue // a directory argument is data, the guard's business
				}
				files = append(files, resolved(a))
				v.links = append(v.links, linkChain(a)...)
			}
		}
	}
	for _, f := range files {
		r := packageRoot(f)
		if r == "" || underSystem(r) || slices.ContainsFunc(v.roots, func(o string) bool { return within(r, o) }) {
			continue
		}
		v.roots = append(v.roots, r)
	}
	return v
}

// bwrapArgs show v in the sandbox. Each directory of links outside what
// the sandbox shows anyway (the roots, system directories, and covered:
// the policy's mounts) gets a tmpfs of its own holding just its links,
// made before the roots are bound (a root may lie below it); remounts make
// those directories read-only, and come after every other mount (later
// mounts may need mount points inside them).
func (v programView) bwrapArgs(covered func(string) bool) (args, remounts []string) {
	shown := func(p string) bool {
		return underSystem(p) || slices.ContainsFunc(v.roots, func(r string) bool { return within(p, r) }) || (covered != nil && covered(p))
	}
	byDir := map[string][]link{}
	var dirs []string
	for _, l := range v.links {
		d := filepath.Dir(l.at)
		if shown(l.at) || d == "/" || slices.ContainsFunc(byDir[d], func(o link) bool { return o.at == l.at }) {
			continue
		}
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], l)
	}
	slices.Sort(dirs) // a directory before those inside it
	for _, d := range dirs {
		args = append(args, "--tmpfs", d)
		for _, l := range byDir[d] {
			args = append(args, "--symlink", l.target, l.at)
		}
		remounts = append(remounts, "--remount-ro", d)
	}
	for _, r := range v.roots {
		args = append(args, "--ro-bind", r, r)
	}
	return args, remounts
}

// programBinds are bwrapArgs' arguments, remounts included, with nothing
// covered (the tests' view).
func programBinds(path string, args []string) []string {
	a, r := viewOf(path, args).bwrapArgs(nil)
	return append(a, r...)
}

// link is a symbolic link: where it is, and what it says.
type link struct{ at, target string }

// linkChain are the links the kernel follows to open path: every
// component of it, and of each target in turn, that is a link — a link to
// a link to a script, and a linked directory on the way. Each is named
// where it really is (its directory resolved), so that made again there
// in the sandbox, the chain resolves as it does here.
func linkChain(path string) []link {
	if !filepath.IsAbs(path) {
		return nil
	}
	var out []link
	split := func(p string) []string {
		return strings.Split(strings.TrimPrefix(filepath.Clean(p), "/"), "/")
	}
	todo, dir := split(path), "/"
	for steps := 0; len(todo) > 0 && steps < 255; steps++ {
		next := filepath.Join(dir, todo[0])
		todo = todo[1:]
		fi, err := os.Lstat(next)
		if err != nil {
			break
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			dir = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			break
		}
		out = append(out, link{next, target})
		// dir has no link in it: ".." in a relative target means what the
		// kernel makes of it. The walk starts again from the root.
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		todo, dir = append(split(target), todo...), "/"
	}
	return out
}

// packageRoot is the tree a program file belongs to: the directory above
// its first node_modules (the project that installed it), else the nearest
// ancestor holding node_modules, else the file's own directory. Never the
// root or the user's home, which would show everything.
func packageRoot(file string) string {
	if !filepath.IsAbs(file) {
		return ""
	}
	home, _ := os.UserHomeDir()
	ok := func(d string) bool { return d != "/" && d != home && d != "" }
	dir := filepath.Dir(file)
	parts := strings.Split(dir, string(filepath.Separator))
	if i := slices.Index(parts, "node_modules"); i > 1 {
		if r := strings.Join(parts[:i], string(filepath.Separator)); ok(r) {
			return r
		}
	}
	for d := dir; ok(d); d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "node_modules")); err == nil && fi.IsDir() {
			return d
		}
	}
	if !ok(dir) {
		return ""
	}
	return dir
}

// systemDirs are the directories systemBinds shows.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// within reports whether p is dir or under it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func underSystem(p string) bool {
	return slices.ContainsFunc(systemDirs, func(d string) bool { return within(p, d) })
}

// installRoots adds to roots the Python installation (installPrefix) of
// the executable exe and of what its link points to, where the sandbox
// does not show it already.
func installRoots(roots []string, exe string) []string {
	for _, f := range []string{exe, resolved(exe)} {
		if p := installPrefix(f); p != "" && !underSystem(p) && !slices.Contains(roots, p) {
			roots = append(roots, p)
		}
	}
	return roots
}

// resolverBinds keep name resolution working for a server that is a client
// of a service when /etc/resolv.conf links outside /etc (systemd-resolved).
func resolverBinds() []string {
	fi, err := os.Lstat("/etc/resolv.conf")
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	dir := filepath.Dir(resolved("/etc/resolv.conf"))
	if underSystem(dir) || !filepath.IsAbs(dir) || dir == "/" {
		return nil
	}
	return []string{"--ro-bind-try", dir, dir}
}

func resolved(path string) string {
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return path
	}
	return p
}
