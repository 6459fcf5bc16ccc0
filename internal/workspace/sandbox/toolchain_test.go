package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// TestCommandsRunTheUsersPyenvPython: where python3 on PATH is a pyenv
// shim, a sandboxed command's python3 and pip are the interpreter pyenv
// picks (not the system's), and the home shows nothing but that
// installation: a secret file there stays unreadable.
func TestCommandsRunTheUsersPyenvPython(t *testing.T) {
	needBwrap(t)
	out, err := exec.Command("pyenv", "prefix").Output()
	if err != nil {
		t.Skipf("no pyenv here (%v); CI installs none", err)
	}
	prefix := strings.TrimSpace(string(out))
	if p, _ := exec.LookPath("python3"); !strings.HasSuffix(filepath.Dir(p), "shims") {
		t.Skipf("python3 on PATH (%s) is not a shim", p)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	secret, err := os.CreateTemp(home, ".massgen-test-secret-")
	if err != nil {
		t.Skipf("cannot write a stand-in secret in the home: %v", err)
	}
	secret.WriteString("hunter2")
	secret.Close()
	t.Cleanup(func() { os.Remove(secret.Name()) })
	w := newWorld(t)
	r := w.runner(t, sandbox.Config{})
	res := run(t, r, `python3 -c 'import sys; print("prefix=" + sys.prefix)'; pip --version; cat `+secret.Name()+`; ls -a `+home)
	if !strings.Contains(res.Output, "prefix="+prefix+"\n") {
		t.Errorf("python3 in the sandbox is not pyenv's %s: %s", prefix, res.Output)
	}
	if !strings.Contains(res.Output, "from "+prefix) {
		t.Errorf("pip in the sandbox is not pyenv's: %s", res.Output)
	}
	if strings.Contains(res.Output, "hunter2") || strings.Contains(res.Output, filepath.Base(secret.Name())+"\n") {
		t.Errorf("the home's secret was visible: %s", res.Output)
	}
}
