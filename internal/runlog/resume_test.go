package runlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
)

// A resumed run killed before its first step (its replay log holds only
// its config, which names the answers it was seeded with) carries those
// answers on: a later --continue does not lose them. A log cut inside its
// config line says nothing: Carried fails, and the caller falls back on
// the session's record.
func TestCarriedByARunKilledBeforeItsFirstStep(t *testing.T) {
	seeds := []coord.Seed{{Agent: "a", Content: "Four."}, {Agent: "b", Content: "4"}}
	cfg := coord.Config{Agents: []string{"a", "b", "c"}, Settings: coord.Settings{}.WithDefaults(), Seed: seeds}
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, ReplayName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := coord.NewLogWriter(f, cfg); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, _, err := Carried(dir)
	if err != nil || !cmp.Equal(got, seeds) {
		t.Errorf("Carried = %+v, %v; want the seeds %+v", got, err, seeds)
	}

	data, _ := os.ReadFile(filepath.Join(dir, ReplayName))
	if err := os.WriteFile(filepath.Join(dir, ReplayName), data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _, err := Carried(dir); err == nil {
		t.Errorf("Carried of a log cut inside its config = %+v, nil; want an error", got)
	}
}
