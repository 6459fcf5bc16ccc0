package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A program installed under /tmp stays visible in the sandbox's fresh /tmp:
// its top directory there, and that of the file its link points to.
func TestProgramBindsKeepAProgramUnderTmp(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "prog")
	if err != nil {
		t.Skip("no /tmp here:", err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "node_modules", ".bin")
	pkg := filepath.Join(dir, "node_modules", "server")
	for _, d := range []string{bin, pkg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pkg, "index.js"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(bin, "server")
	if err := os.Symlink("../server/index.js", link); err != nil {
		t.Fatal(err)
	}
	if got, want := programBinds(link, nil), []string{"--ro-bind", dir, dir}; !slices.Equal(got, want) {
		t.Errorf("programBinds(%s) = %q, want %q", link, got, want)
	}
	if got := programBinds("/usr/bin/node", nil); len(got) != 0 {
		t.Errorf("a program outside /tmp needs no bind, got %q", got)
	}
}
