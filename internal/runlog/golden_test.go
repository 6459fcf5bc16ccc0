package runlog

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// coordination_table.txt is read by people and by scripts that grep it: its
// layout is a compatibility contract, checked here in full (tool calls
// included: they are lines in their agent's column).
func TestCoordinationTableGolden(t *testing.T) {
	w := newTestWriter(t, Metadata{Question: "What is 2+2?"})
	for _, e := range toolRun() {
		if err := w.Handle(ev(e)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(w.Dir(), "coordination_table.txt")); got != w.renderTable() {
		t.Fatal("coordination_table.txt is not renderTable's text")
	}
	// The temporary directory's name varies in length, and the table
	// wraps the Log line: render it again under a fixed name.
	w.dir = "/logs/log_20250304_102030_123456"
	got := w.renderTable()
	golden := filepath.Join("testdata", "coordination_table.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("coordination_table.txt differs from %s (-want +got; -update rewrites it):\n%s", golden, diff)
	}
}
