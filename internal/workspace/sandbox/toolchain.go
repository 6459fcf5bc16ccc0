package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The user's own Python in commands. A python3 (or python, pip) that PATH
// finds through a version manager's shim (pyenv) or in an installation
// outside the system directories cannot run in the sandbox, which shows
// none of the home: a command would silently get the system's Python, or
// none. So its installation (installPrefix: a pyenv version, a virtual
// environment and the interpreter it is made from) is bound read-only,
// and its directory put first on PATH, as `pyenv exec` does; nothing else
// of the home is shown. Resolved once per PATH, as the shim would resolve
// in massgen's working directory.

// pythonNames are the programs whose installation commands get.
var pythonNames = []string{"python3", "python", "pip3", "pip"}

var toolchains struct {
	sync.Mutex
	byPath map[string]toolchain
}

// toolchain is what the sandbox adds for the user's Python.
type toolchain struct {
	binds     []string // bwrap arguments: read-only binds of installations
	pathFirst []string // directories put first on PATH
}

// commandToolchain is the toolchain of the current PATH.
func commandToolchain() toolchain {
	path := os.Getenv("PATH")
	toolchains.Lock()
	defer toolchains.Unlock()
	if tc, ok := toolchains.byPath[path]; ok {
		return tc
	}
	var tc toolchain
	var roots []string
	for _, name := range pythonNames {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		real := realProgram(p, "", nil)
		roots = installRoots(roots, real)
		if dir := filepath.Dir(real); real != p && !slices.Contains(tc.pathFirst, dir) {
			tc.pathFirst = append(tc.pathFirst, dir)
		}
	}
	for _, r := range roots {
		tc.binds = append(tc.binds, "--ro-bind", r, r)
	}
	if toolchains.byPath == nil {
		toolchains.byPath = map[string]toolchain{}
	}
	toolchains.byPath[path] = tc
	return tc
}

// withPath is PATH with tc's directories first.
func (tc toolchain) withPath(path string) string { return pathFirst(path, tc.pathFirst...) }

// pathFirst is the search path path with dirs before it.
func pathFirst(path string, dirs ...string) string {
	if len(dirs) == 0 {
		return path
	}
	if path == "" {
		return strings.Join(dirs, string(os.PathListSeparator))
	}
	return strings.Join(append(slices.Clone(dirs), path), string(os.PathListSeparator))
}
