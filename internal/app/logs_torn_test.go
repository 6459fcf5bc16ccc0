package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadEvents reads the events of a journal whose last line was cut short
// (a kill or a full disk mid-write) up to that line, and says the events
// end early; a journal that ends whole says nothing.
func TestReadEventsUpToATornLastLine(t *testing.T) {
	dir := t.TempDir()
	whole := `{"seq":1,"type":"run_started","text":"q"}` + "\n" + `{"seq":2,"type":"turn_started","agent":"a"}` + "\n"
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "coordination_events.jsonl"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(whole + `{"seq":3,"type":"answer_acc`)
	recs, short, err := ReadEvents(dir)
	if err != nil || len(recs) != 2 || !strings.Contains(short, "the events end early") {
		t.Errorf("torn journal: %d events, %q, %v; want 2 and a note that they end early", len(recs), short, err)
	}
	write(whole)
	if recs, short, err := ReadEvents(dir); err != nil || len(recs) != 2 || short != "" {
		t.Errorf("whole journal: %d events, %q, %v; want 2 and no note", len(recs), short, err)
	}
}
