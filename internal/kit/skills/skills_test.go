package skills

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func skill(t *testing.T, dir, name, front string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, File), []byte(front+"\n# body\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Discover: project first, then user, shipped (filtered by massgen_skills)
// and earlier runs' evolving skills; the first of a name wins; a skill
// that is a link, or whose SKILL.md is a link, is refused with a warning.
func TestDiscoverOrderDedupeAndRefusals(t *testing.T) {
	root := t.TempDir()
	proj, user, logs := filepath.Join(root, "proj"), filepath.Join(root, "user"), filepath.Join(root, "logs")
	skill(t, proj, "pdf", "---\nname: pdf\ndescription: PDF toolkit\n---")
	skill(t, proj, "nameless", "---\ndescription: >\n  folded\n  text\n---")
	skill(t, user, "pdf", "---\nname: pdf\ndescription: the user's pdf\n---")
	skill(t, user, "notes", "---\nname: notes\ndescription: note taking\n---")
	outside := filepath.Join(root, "outside")
	skill(t, outside, "evil", "---\nname: evil\ndescription: from outside\n---")
	must(t, os.Symlink(filepath.Join(outside, "evil"), filepath.Join(proj, "evil")))
	must(t, os.MkdirAll(filepath.Join(proj, "linkfile"), 0o755))
	must(t, os.Symlink(filepath.Join(outside, "evil", File), filepath.Join(proj, "linkfile", File)))
	skill(t, filepath.Join(logs, "log_20260101_000000", "final", "agent_a", "workspace", "tasks"), "evolving_skill",
		"---\nname: csv-cleanup\ndescription: learned last time\n---")
	builtin, err := Install(filepath.Join(root, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	sks, warnings := Discover(Sources{Project: proj, User: user, Builtin: builtin, Only: []string{"file-search", "nope"}, Logs: logs})
	var got []string
	for _, sk := range sks {
		got = append(got, sk.Location+":"+sk.Name+":"+sk.Description)
	}
	want := []string{"project:nameless:folded text", "project:pdf:PDF toolkit", "user:notes:note taking",
		"builtin:file-search:" + sks[3].Description, "previous_session:csv-cleanup:learned last time"}
	if !slices.Equal(got, want) {
		t.Errorf("skills:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !sks[4].Evolving || sks[3].Evolving {
		t.Errorf("evolving flags: %+v", sks)
	}
	w := strings.Join(warnings, "\n")
	for _, s := range []string{"proj/evil is a symbolic link", "linkfile/SKILL.md: not a regular file", `massgen ships no skill "nope"`} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings lack %q:\n%s", s, w)
		}
	}
	sec := Section(sks, proj, true)
	for _, s := range []string{"<skills priority=\"medium\">", "<name>pdf</name><description>PDF toolkit</description><location>" + filepath.Join(proj, "pdf", File),
		"<name>csv-cleanup</name>", proj + "/<name>/SKILL.md"} {
		if !strings.Contains(sec, s) {
			t.Errorf("section lacks %q:\n%s", s, sec)
		}
	}
	if strings.Contains(sec, "evil") {
		t.Errorf("the refused skill is offered:\n%s", sec)
	}
	// A registry replaces the listing; the skills it does not name follow.
	must(t, os.WriteFile(filepath.Join(proj, Registry), []byte("Use pdf for PDFs; notes for notes; nameless for folding."), 0o644))
	sec = Section(sks, proj, false)
	if !strings.Contains(sec, "Use pdf for PDFs") || strings.Contains(sec, "<name>pdf</name>") || !strings.Contains(sec, "Recently added") ||
		!strings.Contains(sec, "<name>file-search</name>") || strings.Contains(sec, "save what this task taught") {
		t.Errorf("registry section:\n%s", sec)
	}
	if Section(nil, proj, true) != "" {
		t.Error("a section without skills")
	}
}

// Install writes the shipped skills once, read-only, into a directory
// named by their content.
func TestInstallIsIdempotent(t *testing.T) {
	root := t.TempDir()
	a, err := Install(root)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(a, "file-search", File))
	if err != nil || fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("file-search: %v %v", fi, err)
	}
	b, err := Install(root)
	if err != nil || a != b {
		t.Fatalf("second Install = %q, %v", b, err)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Errorf("%d entries under the root, want 1", len(ents))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
