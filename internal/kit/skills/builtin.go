package skills

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// shipped are the skills massgen ships (builtin/NOTICE.md says where they
// come from and under which licence).
//
//go:embed builtin
var shipped embed.FS

// BuiltinDir is the directory under root where Install puts the shipped
// skills: named by their content, so a new massgen version gets its own
// and a directory once written is never rewritten.
func BuiltinDir(root string) string {
	h := sha256.New()
	fs.WalkDir(shipped, "builtin", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := shipped.ReadFile(p)
			fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
			h.Write(b)
		}
		return nil
	})
	return filepath.Join(root, "builtin-"+hex.EncodeToString(h.Sum(nil))[:12])
}

// Install writes the shipped skills to BuiltinDir(root), unless they are
// there already, and returns the directory. It writes into a fresh
// directory renamed into place, so concurrent runs never see a partial
// copy; the files are read-only.
func Install(root string) (string, error) {
	dir := BuiltinDir(root)
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(shipped, "builtin", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("builtin", p)
		dst := filepath.Join(tmp, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := shipped.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o444)
	})
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if fi, serr := os.Lstat(dir); serr == nil && fi.IsDir() {
			return dir, nil // another run installed it first
		}
		return "", err
	}
	return dir, nil
}
