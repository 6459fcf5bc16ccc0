package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// A program reached through a chain of links — a PATH directory's link to
// an installation's node_modules/.bin link, which names its package's
// script — runs in the sandbox: every step of the chain is visible there,
// read-only, not only the first and the last.
func TestProgramThroughAChainOfLinksRuns(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// Outside /tmp, which the sandbox replaces with an empty one.
	base, err := os.MkdirTemp(wd, "links")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	install := filepath.Join(base, "install")
	pkg := filepath.Join(install, "node_modules", "tool")
	binDir := filepath.Join(install, "node_modules", ".bin")
	pathDir := filepath.Join(base, "pathdir")
	for _, d := range []string{pkg, binDir, pathDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pkg, "cli.sh"), []byte("#!/bin/sh\necho RAN-THROUGH-LINKS\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// install/node_modules/.bin/tool -> ../tool/cli.sh, reached through a
	// link to the installation itself, and pathdir/tool -> that link.
	if err := os.Symlink("../tool/cli.sh", filepath.Join(binDir, "tool")); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(install, alias); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(alias, "node_modules", ".bin", "tool"), filepath.Join(pathDir, "tool")); err != nil {
		t.Fatal(err)
	}
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(pathDir, "tool"))
	sandbox.Program(bwrap, w.g, cmd, []string{"PATH=/usr/bin:/bin"}, false)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RAN-THROUGH-LINKS") {
		t.Fatalf("the program behind two links did not run: %v: %s", err, out)
	}
}
