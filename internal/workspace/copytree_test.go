package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCopyTree(t *testing.T) {
	src := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(outside, []byte("secret"), 0o644))
	must(os.MkdirAll(filepath.Join(src, "d", "e"), 0o755))
	must(os.WriteFile(filepath.Join(src, "d", "e", "f.txt"), []byte("deep"), 0o640))
	must(os.WriteFile(filepath.Join(src, "top.txt"), []byte("top"), 0o644))
	// Links an agent planted must not carry the outside into a snapshot.
	must(os.Symlink(outside, filepath.Join(src, "link")))
	must(os.Symlink(filepath.Dir(outside), filepath.Join(src, "dirlink")))

	for _, mode := range []CopyMode{Clone, Link, Plain} {
		dst := filepath.Join(t.TempDir(), "copy")
		st, err := CopyTree(src, dst, mode, 0)
		must(err)
		if st.Files != 2 || st.Bytes != 7 {
			t.Errorf("mode %d: stats %+v, want 2 files, 7 bytes", mode, st)
		}
		for _, l := range []string{"link", "dirlink"} {
			if _, err := os.Lstat(filepath.Join(dst, l)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("mode %d: symbolic link %s was copied (%v)", mode, l, err)
			}
		}
		b, err := os.ReadFile(filepath.Join(dst, "d", "e", "f.txt"))
		if err != nil || string(b) != "deep" {
			t.Errorf("mode %d: f.txt = %q, %v", mode, b, err)
		}
		a, _ := os.Stat(filepath.Join(src, "top.txt"))
		c, _ := os.Stat(filepath.Join(dst, "top.txt"))
		if shared := os.SameFile(a, c); shared != (mode == Link) {
			t.Errorf("mode %d: same inode as the source = %v", mode, shared)
		}
		if mode != Link && c.Mode().Perm() != a.Mode().Perm() {
			t.Errorf("mode %d: permissions %v, want %v", mode, c.Mode().Perm(), a.Mode().Perm())
		}
	}
	// The size cap stops the copy with ErrTooLarge.
	if _, err := CopyTree(src, filepath.Join(t.TempDir(), "capped"), Clone, 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap: %v, want ErrTooLarge", err)
	}
	// The destination must be new: a copy never merges into (or through) an existing path.
	if _, err := CopyTree(src, t.TempDir(), Link, 0); !errors.Is(err, os.ErrExist) {
		t.Errorf("into an existing directory: %v", err)
	}
}
