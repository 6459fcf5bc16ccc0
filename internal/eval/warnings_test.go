package eval

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// A team's config warning reaches the eval's stderr once, not once per
// item: the runs carry it in their events, which eval observes.
func TestATeamsWarningIsPrintedOnceForTheWholeEval(t *testing.T) {
	dir, ds := simDir(t, 3)
	team := filepath.Join(dir, "team_independent.yaml")
	data, err := os.ReadFile(team)
	if err != nil {
		t.Fatal(err)
	}
	// upload_files is accepted and ignored, with a warning.
	warned := strings.Replace(string(data), "scenario: quality.yaml}", "scenario: quality.yaml, upload_files: true}", 1)
	if warned == string(data) {
		t.Fatal("the test team changed: no place for the ignored key")
	}
	if err := os.WriteFile(team, []byte(warned), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	if _, err := evaluate(t, t.Context(), dir, ds, false, func(o *Options) { o.Env.Stderr = &stderr }); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stderr.b.String(), "warning: agents[0].backend.upload_files"); n != 1 {
		t.Errorf("the warning is on stderr %d times over 3 items, want 1:\n%s", n, stderr.b.String())
	}
}
