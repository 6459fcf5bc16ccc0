// Package wstest holds test helpers for code that works on workspaces:
// a fingerprint of a whole directory tree, so a test can assert that a
// refused operation changed nothing on disk.
package wstest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Tree is a fingerprint of a directory tree: one line per entry with its
// kind, mode, content hash or link target.
type Tree []string

// Snapshot fingerprints everything under root (symlinks not followed).
func Snapshot(t testing.TB, root string) Tree {
	t.Helper()
	var out Tree
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("L %s -> %s", rel, target))
		case d.IsDir():
			out = append(out, fmt.Sprintf("D %s %v", rel, info.Mode()))
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			out = append(out, fmt.Sprintf("F %s %v %s", rel, info.Mode(), hex.EncodeToString(h[:8])))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fingerprint %s: %v", root, err)
	}
	slices.Sort(out)
	return out
}

// Unchanged fails the test when root differs from before, listing what
// appeared, disappeared or changed.
func Unchanged(t testing.TB, root string, before Tree) {
	t.Helper()
	after := Snapshot(t, root)
	if slices.Equal(before, after) {
		return
	}
	var diff []string
	for _, l := range before {
		if !slices.Contains(after, l) {
			diff = append(diff, "- "+l)
		}
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			diff = append(diff, "+ "+l)
		}
	}
	t.Errorf("the tree under %s changed:\n%s", root, strings.Join(diff, "\n"))
}
