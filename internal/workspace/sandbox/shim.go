package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// A version manager's shim (pyenv, and rbenv, nodenv and their kin, which
// share its shims) is a script on PATH that runs
// `<root>/libexec/<tool> exec <name>`: the tool then reads the user's
// choice (PYENV_VERSION, .python-version files, <root>/version) and execs
// the interpreter under <root>/versions. In the sandbox none of that is
// there: binding the whole root would do, but it lives in the home, and
// the user's choice may sit in files the sandbox does not show. So the
// shim is resolved before the sandbox starts, as `<tool> which <name>`
// would in the program's own directory and environment, and the sandbox
// runs that interpreter and shows its installation (installPrefix) and
// nothing else of the home.

// shimLine is the line of a shim that names its tool.
var shimLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^exec "(/[^"]*/libexec/([a-z]+env))" exec "\$program"`)
})

// shimTimeout bounds resolving a shim (pyenv is a shell script: fast, but
// never waited on for long).
const shimTimeout = 10 * time.Second

// realProgram is the program the shim path would run, resolved in dir
// ("" = massgen's working directory) with env (nil = massgen's), or path
// itself when it is no shim or cannot be resolved (the program then fails
// in the sandbox, and its stderr says why).
func realProgram(path, dir string, env []string) string {
	tool, name, ok := shimTool(path)
	if !ok {
		return path
	}
	root := filepath.Dir(filepath.Dir(tool))
	ctx, cancel := context.WithTimeout(context.Background(), shimTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, "which", filepath.Base(path))
	cmd.Dir = dir
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clone(env), strings.ToUpper(name)+"_ROOT="+root)
	out, err := cmd.Output()
	if err != nil {
		return path
	}
	real := strings.TrimSpace(string(out))
	if fi, err := os.Stat(real); err != nil || !filepath.IsAbs(real) || fi.IsDir() {
		return path
	}
	if _, _, shim := shimTool(real); shim {
		return path // a shim again: not followed
	}
	return real
}

// shimTool is the tool (its path and name) a shim runs, if path is one.
func shimTool(path string) (tool, name string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := f.Read(head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", "", false
	}
	m := shimLine().FindSubmatch(head)
	if m == nil {
		return "", "", false
	}
	return string(m[1]), string(m[2]), true
}

// withPathFirst puts dir at the head of env's PATH, as `pyenv exec` does
// for the interpreter it runs, so that the program's own children find
// their interpreter rather than the shim, which cannot work in the sandbox.
func withPathFirst(env []string, dir string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		if rest, ok := strings.CutPrefix(kv, "PATH="); ok {
			out[i] = "PATH=" + pathFirst(rest, dir)
			return out
		}
	}
	return append(out, "PATH="+dir)
}

// installPrefix is the installation an interpreter's executable belongs to
// when it is a Python one: <prefix>/bin/python3 beside <prefix>/lib/python3.X
// (its standard library) or a virtual environment's pyvenv.cfg; "" when it
// is not. A pyenv version, a venv or a /usr/local build each need their
// whole prefix, and no more.
func installPrefix(exe string) string {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "bin" {
		return ""
	}
	prefix := filepath.Dir(dir)
	if home, _ := os.UserHomeDir(); prefix == "/" || prefix == home {
		return "" // ~/bin/python3 does not make the home an installation
	}
	if _, err := os.Stat(filepath.Join(prefix, "pyvenv.cfg")); err == nil {
		return prefix
	}
	libs, _ := filepath.Glob(filepath.Join(prefix, "lib", "python[23]*", "os.py"))
	if len(libs) > 0 {
		return prefix
	}
	return ""
}
