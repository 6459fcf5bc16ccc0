package store

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A background run outlives the process that recorded it, with the log
// directory of each attempt in order, until it is ended.
func TestBackgroundRunsOutliveTheStoreUntilEnded(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	for i, id := range []string{"b", "a"} {
		req := json.RawMessage(`{"model":"massgen","input":"q` + id + `"}`)
		if err := st.PutBackground(ctx, BackgroundRun{ID: id, Created: at.Add(time.Duration(i) * time.Second), Request: req}); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"/logs/1", "/logs/2"} {
		if err := st.AddBackgroundLogDir(ctx, "a", dir); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.BackgroundRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].ID != "b" || runs[1].ID != "a" {
		t.Fatalf("runs = %+v; want b then a (oldest first)", runs)
	}
	if string(runs[1].Request) != `{"model":"massgen","input":"qa"}` || !slices.Equal(runs[1].LogDirs, []string{"/logs/1", "/logs/2"}) || runs[0].LogDirs != nil {
		t.Errorf("run a = %+v, run b = %+v", runs[1], runs[0])
	}
	if err := st.EndBackground(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := st.EndBackground(ctx, "never"); err != nil {
		t.Errorf("ending an unknown run: %v", err)
	}
	if runs, _ = st.BackgroundRuns(ctx); len(runs) != 1 || runs[0].ID != "a" {
		t.Errorf("after ending b: %+v", runs)
	}
}
