package docker

// A container's endpoints (sandbox.Config.Endpoints: massgen's tool
// endpoint of code-based tools). The container keeps no network of the
// host's (network mode none, no unix sockets); each container gets a relay,
// this same executable run in it with the tunnel argument (a
// sandbox.TunnelNet), whose standard input and output massgen holds through
// the engine: the relay listens on 127.0.0.1 inside for each endpoint, and
// massgen takes each connection to its endpoint, a key put in place of its
// stand-in on the way (commands hold only the stand-in). With network mode
// host the container shares the host's loopback, so the endpoints are
// given as they are, as bubblewrap does with command_line_allow_network.
//
// The relay, and the wrappers' Python when the image has none, are
// programs of the host: the container sees the host's /usr (and /lib,
// /lib64 where they are directories of their own) read-only under
// /.massgen/host, the Python installation and this executable there too,
// and runs them through the host's dynamic loader with the host's library
// directories, so that nothing of the image is replaced. python3 and
// python in /.massgen/bin, last on PATH, run the host's Python: an image
// with its own Python keeps it.

import (
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/mount"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// Where the container sees the host's programs.
const (
	hostRoot  = "/.massgen/host"
	hostBin   = "/.massgen/bin"
	relayPath = "/.massgen/relay"
	// relayTimeout bounds the relay's start.
	relayTimeout = 20 * time.Second
	// defaultPath is the engine's PATH for an image that sets none.
	defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// endpoints is the container's side of sandbox.Config.Endpoints.
type endpoints struct {
	net   *sandbox.TunnelNet
	relay []string // the relay's argv in the container

	mu   sync.Mutex
	stop func() // the live container's relay
}

// setEndpoints gives b's commands cfg's endpoints: their routes in the
// environment, the relay's mounts, the host's Python. It returns what
// the user should know (no Python to show).
func (b *dockerBox) setEndpoints(ctx context.Context, cfg sandbox.Config) ([]string, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, nil
	}
	if b.cfg.Network == "host" {
		routes := make([]sandbox.Route, len(cfg.Endpoints))
		for i, ep := range cfg.Endpoints {
			routes[i] = sandbox.Route{URL: ep.URL, Key: ep.Key}
		}
		if cfg.RouteEnv != nil {
			b.env = append(b.env, cfg.RouteEnv(routes)...)
		}
		return nil, nil
	}
	rt, err := hostRuntime()
	if err != nil {
		return nil, fmt.Errorf("agent %s: the endpoints of its container: %w", b.g.Agent(), err)
	}
	n, err := sandbox.NewTunnelNet(cfg.Endpoints)
	if err != nil {
		return nil, err
	}
	b.ep = &endpoints{net: n, relay: append(slices.Clone(rt.relay), n.RelayArgs()...)}
	b.binds = append(b.binds, rt.mounts...)
	if cfg.RouteEnv != nil {
		b.env = append(b.env, cfg.RouteEnv(n.Routes())...)
	}
	b.env = append(b.env, "PATH="+b.imagePath(ctx)+":"+hostBin)
	var warnings []string
	if rt.python == "" {
		warnings = append(warnings, fmt.Sprintf("agent %s: no Python on this machine to show its container, so its commands have only "+
			"the image's (%s)", b.g.Agent(), b.cfg.Image))
	}
	return warnings, nil
}

// imagePath is the image's PATH, or the engine's default.
func (b *dockerBox) imagePath(ctx context.Context) string {
	ins, err := b.cli.ImageInspect(ctx, b.cfg.Image)
	if err == nil && ins.Config != nil {
		for _, kv := range ins.Config.Env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok && v != "" {
				return v
			}
		}
	}
	return defaultPath
}

// startEndpointsLocked starts the relay in the new container b.id; b.mu
// is held.
func (b *dockerBox) startEndpointsLocked(ctx context.Context) error {
	if b.ep == nil {
		return nil
	}
	stop, err := b.startRelay(ctx, b.id, b.ep.relay, b.ep.net)
	if err != nil {
		return err
	}
	b.ep.mu.Lock()
	b.ep.stop = stop
	b.ep.mu.Unlock()
	return nil
}

// stopEndpoints ends the live container's relay (Close: the container's
// removal ends it too).
func (b *dockerBox) stopEndpoints(final bool) {
	if b.ep == nil {
		return
	}
	b.ep.mu.Lock()
	stop := b.ep.stop
	b.ep.stop = nil
	b.ep.mu.Unlock()
	if stop != nil {
		stop()
	}
	if final {
		b.ep.net.Close()
	}
}

// runtime is what a container needs to run the host's relay and Python.
type runtime struct {
	mounts []mount.Mount
	relay  []string // argv of this executable in the container
	python string   // the host's Python, or "" when there is none

	py       *python // the host's Python, for its shims
	pyLoader string
	pyRun    []string
}

// hostRuntime is the host's runtime for a container. The host's programs
// are worked out once per process (the host does not change under a
// run); the Python shims' directory is checked each time, since it lives
// under the user's cache directory, which the environment (HOME) names.
func hostRuntime() (runtime, error) {
	rt, err := hostPrograms()
	if err != nil || rt.py == nil {
		return rt, err
	}
	dir, err := pythonShims(*rt.py, rt.pyLoader, rt.pyRun)
	if err != nil {
		return rt, nil // no Python: the image's, if it has one
	}
	rt.mounts = append(slices.Clone(rt.mounts), mount.Mount{Type: mount.TypeBind, Source: dir, Target: hostBin, ReadOnly: true})
	rt.python = rt.py.exe
	return rt, nil
}

var hostPrograms = sync.OnceValues(func() (runtime, error) {
	var rt runtime
	self, err := os.Executable()
	if err != nil {
		return rt, err
	}
	self = resolvedPath(self)
	for _, d := range []string{"/usr", "/lib", "/lib64", "/lib32", "/libx32"} {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			rt.mounts = append(rt.mounts, mount.Mount{Type: mount.TypeBind, Source: d, Target: hostRoot + d, ReadOnly: true})
		}
	}
	rt.mounts = append(rt.mounts, mount.Mount{Type: mount.TypeBind, Source: self, Target: relayPath, ReadOnly: true})
	loader, runpath, err := interpreter(self)
	if err != nil {
		return rt, fmt.Errorf("reading %s: %w", self, err)
	}
	rt.relay = []string{relayPath}
	if loader != "" {
		rt.relay = []string{hostRoot + loader, "--library-path", libraryPath(loader, runpath), relayPath}
	}
	py, err := hostPython()
	if err != nil {
		return rt, nil // no Python: the image's, if it has one
	}
	pyLoader, pyRunpath, err := interpreter(py.exe)
	if err != nil {
		return rt, nil
	}
	for _, root := range py.roots {
		if !underHostMounts(root) {
			rt.mounts = append(rt.mounts, mount.Mount{Type: mount.TypeBind, Source: root, Target: hostRoot + root, ReadOnly: true})
		}
	}
	rt.py, rt.pyLoader, rt.pyRun = &py, pyLoader, pyRunpath
	return rt, nil
})

// interpreter is an executable's dynamic loader (resolved) and its
// RUNPATH/RPATH directories, or "" for a static one.
func interpreter(exe string) (loader string, runpath []string, err error) {
	f, err := elf.Open(exe)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return "", nil, err
			}
			loader = resolvedPath(strings.TrimRight(string(b), "\x00"))
		}
	}
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		if vs, err := f.DynString(tag); err == nil {
			for _, v := range vs {
				for _, d := range strings.Split(v, ":") {
					d = strings.ReplaceAll(d, "$ORIGIN", filepath.Dir(exe))
					if filepath.IsAbs(d) {
						runpath = append(runpath, resolvedPath(d))
					}
				}
			}
		}
	}
	return loader, runpath, nil
}

// libraryPath is the loader's search path in the container: the
// program's own directories first, then the host's library directories.
func libraryPath(loader string, first []string) string {
	dirs := slices.Clone(first)
	dirs = append(dirs, filepath.Dir(loader))
	for _, g := range []string{"/lib/*-linux-*", "/usr/lib/*-linux-*", "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"} {
		m, _ := filepath.Glob(g)
		for _, d := range m {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				dirs = append(dirs, resolvedPath(d))
			}
		}
	}
	var out []string
	for _, d := range dirs {
		if p := hostRoot + d; !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return strings.Join(out, ":")
}

// underHostMounts reports whether p is inside /usr or another system
// directory the container sees under hostRoot already.
func underHostMounts(p string) bool {
	for _, d := range []string{"/usr", "/lib", "/lib64", "/lib32", "/libx32"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// python is the host's Python installation.
type python struct {
	exe   string   // the interpreter, links resolved
	home  string   // PYTHONHOME in the container: prefix, or prefix:exec_prefix
	lib   string   // the installation's library directory (libpython)
	roots []string // directories to show: the installation
}

// hostPython asks the Python on PATH where it is (a pyenv shim answers
// for the interpreter it stands for).
func hostPython() (python, error) {
	var py python
	var exe string
	for _, name := range []string{"python3", "python"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		return py, exec.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, "-c",
		"import os, sys; print(os.path.realpath(sys.executable)); print(sys.base_prefix); print(sys.base_exec_prefix)").Output()
	if err != nil {
		return py, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		return py, fmt.Errorf("%s said %q", exe, out)
	}
	py.exe = resolvedPath(lines[0])
	prefix, execPrefix := resolvedPath(lines[1]), resolvedPath(lines[2])
	py.home, py.lib = hostRoot+prefix, filepath.Join(prefix, "lib")
	if execPrefix != prefix {
		py.home += ":" + hostRoot + execPrefix
	}
	for _, r := range []string{prefix, execPrefix, filepath.Dir(filepath.Dir(py.exe))} {
		if r != "/" && !slices.Contains(py.roots, r) {
			py.roots = append(py.roots, r)
		}
	}
	return py, nil
}

// pythonShims writes python3 and python, which run the host's Python in
// a container, into a directory of their own under the user's cache (the
// same for the same Python; not the shared temporary directory, where
// another user could make it first), and returns it.
func pythonShims(py python, loader string, runpath []string) (string, error) {
	run := "'" + hostRoot + py.exe + "'"
	if loader != "" {
		run = "'" + hostRoot + loader + "' --library-path '" + libraryPath(loader, append(runpath, py.lib)) + "' " + run
	}
	script := "#!/bin/sh\n# The host's Python, shown read-only by massgen (docker mode).\nPYTHONHOME='" + py.home + "' exec " + run + " \"$@\"\n"
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	base := filepath.Join(cache, "massgen")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	dir := filepath.Join(base, fmt.Sprintf("python-%x", hashString(script)))
	if b, err := os.ReadFile(filepath.Join(dir, "python3")); err == nil && string(b) == script {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(base, "python-")
	if err != nil {
		return "", err
	}
	for _, name := range []string{"python3", "python"} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(script), 0o755); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if b, err := os.ReadFile(filepath.Join(dir, "python3")); err == nil && string(b) == script {
			return dir, nil // another process made it
		}
		return "", err
	}
	return dir, nil
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func resolvedPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
