package memory

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/wstest"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCaptureFallsBackWithoutAPresentation(t *testing.T) {
	for _, tc := range []struct {
		mode               string
		presents, noFallbk bool
		want               Mode
	}{
		{"", true, false, Round},
		{"round", false, false, Round},
		{"final_only", true, false, FinalOnly},
		{"final_only", false, false, Round},
		{"final_only", false, true, FinalOnly},
		{"verification_and_final_only", false, false, Round},
		{"verification_and_final_only", true, false, VerificationAndFinal},
	} {
		if got := Capture(tc.mode, tc.presents, tc.noFallbk); got != tc.want {
			t.Errorf("Capture(%q, %v, %v) = %s, want %s", tc.mode, tc.presents, tc.noFallbk, got, tc.want)
		}
	}
}

func TestPrepareLaysOutTheTiersAndThePolicy(t *testing.T) {
	ws := t.TempDir()
	p, err := Prepare(ws, VerificationAndFinal)
	if err != nil {
		t.Fatal(err)
	}
	for _, tier := range Tiers {
		if fi, err := os.Stat(filepath.Join(ws, Dir, tier)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", tier, err)
		}
	}
	real, _ := filepath.EvalSymlinks(ws)
	if len(p.Context) != 1 || p.Context[0].Path != filepath.Join(real, Dir) || !p.Context[0].Write {
		t.Errorf("context %+v", p.Context)
	}
	if !slices.Equal(p.Writable, []string{filepath.Join(real, Dir, ShortTerm, Memo)}) {
		t.Errorf("writable %v", p.Writable)
	}
	if p, _ := Prepare(t.TempDir(), Round); len(p.Context)+len(p.Writable) != 0 {
		t.Errorf("round mode adds %+v", p)
	}
}

// Merge: a new name is copied, a clash is appended under the other
// agent's header, the same content is left as it is; links in the others'
// memory are not followed (the secret they point to stays out).
func TestMergeIntoTheWinner(t *testing.T) {
	root := t.TempDir()
	win, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	secret := filepath.Join(root, "secret.txt")
	write(t, secret, "TOP SECRET")
	write(t, filepath.Join(win, Dir, ShortTerm, "prefs.md"), "tables\n")
	write(t, filepath.Join(win, Dir, LongTerm, "same.md"), "same")
	write(t, filepath.Join(b, Dir, ShortTerm, "prefs.md"), "bullets")
	write(t, filepath.Join(b, Dir, LongTerm, "same.md"), "same\n")
	write(t, filepath.Join(c, Dir, ShortTerm, "c.md"), "c's note")
	if err := os.Symlink(secret, filepath.Join(c, Dir, ShortTerm, "leak.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(c, Dir, "long_term")); err != nil {
		t.Fatal(err)
	}
	wrote, err := Merge(win, map[string]string{"b": b, "c": c})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(win, Dir, ShortTerm, "prefs.md")); got != "tables\n\n## From Agent b\n\nbullets\n" {
		t.Errorf("prefs.md = %q", got)
	}
	if got := read(t, filepath.Join(win, Dir, ShortTerm, "c.md")); got != "c's note" {
		t.Errorf("c.md = %q", got)
	}
	if got := read(t, filepath.Join(win, Dir, LongTerm, "same.md")); got != "same" {
		t.Errorf("same.md = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(win, Dir, ShortTerm, "leak.md")); !os.IsNotExist(err) {
		t.Errorf("the link's target was merged: %v", err)
	}
	if len(wrote) != 2 {
		t.Errorf("wrote %v, want prefs.md and c.md", wrote)
	}
}

// Carry copies a previous winner's memories from the log's final copy;
// a planted link in the source is not followed, and a symlinked memory
// directory in the target workspace is not written through.
func TestCarryFromTheLog(t *testing.T) {
	root := t.TempDir()
	logDir := filepath.Join(root, "log")
	mem := filepath.Join(logDir, "final", "a", "workspace", Dir)
	write(t, filepath.Join(mem, ShortTerm, "prefs.md"), "tables")
	write(t, filepath.Join(mem, LongTerm, "x.md"), "---\ndescription: d\n---\nbody")
	secret := filepath.Join(root, "secret.md")
	write(t, secret, "TOP SECRET")
	if err := os.Symlink(secret, filepath.Join(mem, ShortTerm, "leak.md")); err != nil {
		t.Fatal(err)
	}
	if got := FromLog(logDir); got != mem {
		t.Fatalf("FromLog = %q, want %q", got, mem)
	}
	ws := filepath.Join(root, "ws")
	if _, err := Prepare(ws0(t, ws), Round); err != nil {
		t.Fatal(err)
	}
	n, err := Carry(ws, mem)
	if err != nil || n != 2 {
		t.Fatalf("Carry = %d, %v", n, err)
	}
	if got := read(t, filepath.Join(ws, Dir, ShortTerm, "prefs.md")); got != "tables" {
		t.Errorf("prefs.md = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, Dir, ShortTerm, "leak.md")); !os.IsNotExist(err) {
		t.Errorf("leak.md carried: %v", err)
	}
	s := Section(ws, Round, "")
	for _, want := range []string{"#### prefs.md\ntables", "memory/long_term/x.md: d", "Write memories with the file tools"} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}

	// A workspace whose memory/short_term is a link out: nothing is
	// written outside it.
	out := filepath.Join(root, "outside")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	ws2 := ws0(t, filepath.Join(root, "ws2"))
	if err := os.MkdirAll(filepath.Join(ws2, Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(ws2, Dir, ShortTerm)); err != nil {
		t.Fatal(err)
	}
	before := wstest.Snapshot(t, out)
	if _, err := Carry(ws2, mem); err == nil {
		t.Error("Carry wrote through a link out of the workspace")
	}
	wstest.Unchanged(t, out, before)
}

func ws0(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
