package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/config"
)

func TestAtReferences(t *testing.T) {
	work := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(work, "src"), 0o755))
	must(t, os.WriteFile(filepath.Join(work, "README.md"), nil, 0o644))
	got := AtReferences("Fix @src:w using @README.md. Ask @alice or mail bob@example.com; @src again, @missing/file", work)
	want := []config.ContextPath{
		{Path: filepath.Join(work, "src"), Permission: "write"},
		{Path: filepath.Join(work, "README.md"), Permission: "read"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// What looks like a file but is not there is named, @mentions are not.
	missing := MissingAtReferences("Fix @src:w using @README.md. Ask @alice or mail bob@example.com; @src again, @missing/file, @gone.md", work)
	if diff := cmp.Diff([]string{"@missing/file", "@gone.md"}, missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
}
