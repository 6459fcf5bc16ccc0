package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeFile writes a file, making its directory.
func writeFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// shimOf is a shim as pyenv writes them (pyenv's own template), for the
// tool at root/libexec/<tool>.
func shimOf(root, tool string) string {
	return `#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${0##*/}"

export PYENV_ROOT="` + root + `"
exec "` + root + `/libexec/` + tool + `" exec "$program" "$@"
`
}

// A shim is resolved by asking its tool, in the program's directory and
// environment, which program it would run; the answer is used only when
// it is an existing file that is no shim itself. Anything else stays as
// it is.
func TestRealProgramAsksTheShimsTool(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "versions", "9.9", "bin", "python3")
	writeFile(t, real, "\x7fELF not really", 0o755)
	// The tool answers `which NAME` from the environment and directory it
	// is run in, as pyenv does with PYENV_VERSION and .python-version.
	writeFile(t, filepath.Join(root, "libexec", "fakeenv"), `#!/bin/sh
[ "$1" = which ] || exit 2
[ "$FAKEENV_ROOT" = "`+root+`" ] || { echo "no root" >&2; exit 3; }
if [ -f .fake-version ]; then v=$(cat .fake-version); else v=$FAKE_VERSION; fi
echo "$FAKEENV_ROOT/versions/$v/bin/$2"
`, 0o755)
	shim := filepath.Join(root, "shims", "python3")
	writeFile(t, shim, shimOf(root, "fakeenv"), 0o755)

	if got := realProgram(shim, "", []string{"FAKE_VERSION=9.9", "PATH=/usr/bin:/bin"}); got != real {
		t.Errorf("the shim with FAKE_VERSION=9.9 = %s, want %s", got, real)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".fake-version"), "9.9", 0o644)
	if got := realProgram(shim, dir, []string{"PATH=/usr/bin:/bin"}); got != real {
		t.Errorf("the shim in a directory that chooses 9.9 = %s, want %s", got, real)
	}
	if got := realProgram(shim, "", []string{"FAKE_VERSION=1.0", "PATH=/usr/bin:/bin"}); got != shim {
		t.Errorf("a shim whose answer does not exist = %s, want the shim kept", got)
	}
	loop := filepath.Join(root, "versions", "loop", "bin", "python3")
	writeFile(t, loop, shimOf(root, "fakeenv"), 0o755)
	if got := realProgram(shim, "", []string{"FAKE_VERSION=loop", "PATH=/usr/bin:/bin"}); got != shim {
		t.Errorf("a shim that leads to a shim = %s, want the first kept", got)
	}
	for _, p := range []string{"/bin/sh", real, filepath.Join(root, "missing")} {
		if got := realProgram(p, "", nil); got != p {
			t.Errorf("realProgram(%s) = %s, want it unchanged", p, got)
		}
	}
}

// With pyenv installed, its python3 shim resolves to what `pyenv which
// python3` says.
func TestRealProgramResolvesAPyenvShim(t *testing.T) {
	shim, err := exec.LookPath("python3")
	if err != nil || !strings.HasSuffix(filepath.Dir(shim), "/shims") {
		t.Skip("python3 is no pyenv shim here")
	}
	want, err := exec.Command("pyenv", "which", "python3").Output()
	if err != nil {
		t.Skipf("no pyenv: %v", err)
	}
	if got := realProgram(shim, "", nil); got != strings.TrimSpace(string(want)) {
		t.Errorf("realProgram(%s) = %s, want %s", shim, got, want)
	}
}

// A Python interpreter's installation is its prefix, when the prefix holds
// its standard library or is a virtual environment; never the home.
func TestInstallPrefixIsAPythonInstallation(t *testing.T) {
	base := t.TempDir()
	pyenvVersion := filepath.Join(base, "versions", "3.11.7")
	writeFile(t, filepath.Join(pyenvVersion, "bin", "python3.11"), "", 0o755)
	writeFile(t, filepath.Join(pyenvVersion, "lib", "python3.11", "os.py"), "", 0o644)
	venv := filepath.Join(base, "proj", ".venv")
	writeFile(t, filepath.Join(venv, "bin", "python"), "", 0o755)
	writeFile(t, filepath.Join(venv, "pyvenv.cfg"), "home = /usr/bin\n", 0o644)
	local := filepath.Join(base, "local")
	writeFile(t, filepath.Join(local, "bin", "tool"), "", 0o755)
	writeFile(t, filepath.Join(local, "lib", "python3.11", "site-packages", "x.py"), "", 0o644)
	for exe, want := range map[string]string{
		filepath.Join(pyenvVersion, "bin", "python3.11"):          pyenvVersion,
		filepath.Join(venv, "bin", "python"):                      venv,
		filepath.Join(local, "bin", "tool"):                       "", // site-packages alone is no installation
		filepath.Join(pyenvVersion, "lib", "python3.11", "os.py"): "",
	} {
		if got := installPrefix(exe); got != want {
			t.Errorf("installPrefix(%s) = %q, want %q", exe, got, want)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		if got := installPrefix(filepath.Join(home, "bin", "python3")); got != "" {
			t.Errorf("~/bin/python3 makes %q an installation", got)
		}
	}
	// programBinds shows the whole installation, once.
	got := programBinds(filepath.Join(pyenvVersion, "bin", "python3.11"), nil)
	if want := []string{"--ro-bind", pyenvVersion, pyenvVersion}; !slices.Equal(got, want) {
		t.Errorf("programBinds = %q, want %q", got, want)
	}
}

func TestPythonVersionsAreInterpreters(t *testing.T) {
	for name, want := range map[string]bool{"python3": true, "python3.11": true, "python": true, "node": true,
		"pythonista": false, "python3-config": false, "sh": false} {
		if got := isInterpreter(name); got != want {
			t.Errorf("isInterpreter(%q) = %v, want %v", name, got, want)
		}
	}
}

// withPathFirst puts the interpreter's directory first, as `pyenv exec`.
func TestWithPathFirst(t *testing.T) {
	got := withPathFirst([]string{"HOME=/tmp", "PATH=/usr/bin:/bin"}, "/opt/py/bin")
	if want := []string{"HOME=/tmp", "PATH=/opt/py/bin:/usr/bin:/bin"}; !slices.Equal(got, want) {
		t.Errorf("withPathFirst = %q, want %q", got, want)
	}
	if got := withPathFirst([]string{"HOME=/tmp"}, "/opt/py/bin"); !slices.Contains(got, "PATH=/opt/py/bin") {
		t.Errorf("withPathFirst without PATH = %q", got)
	}
}
