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
// script — runs in the sandbox: every step of the chain is there,
// read-only, not only the first and the last, and nothing beside them.
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
	// Beside the PATH entry's link sits a file of the user's: the
	// program may not read it, nor write beside its links.
	secret := filepath.Join(pathDir, "notes.txt")
	if err := os.WriteFile(secret, []byte("SECRET-BESIDE-THE-LINK"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho RAN-THROUGH-LINKS\ncat " + secret + "\necho x > " + filepath.Join(pathDir, "planted") + " && echo WROTE-BESIDE\n"
	if err := os.WriteFile(filepath.Join(pkg, "cli.sh"), []byte(script), 0o755); err != nil {
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
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "RAN-THROUGH-LINKS") {
		t.Fatalf("the program behind two links did not run: %s", out)
	}
	if strings.Contains(string(out), "SECRET-BESIDE-THE-LINK") || strings.Contains(string(out), "WROTE-BESIDE") {
		t.Errorf("the program read or wrote beside its link:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(pathDir, "planted")); err == nil {
		t.Error("the program wrote beside its link on the host")
	}
}
