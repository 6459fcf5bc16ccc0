package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// A stopped command is over when Run returns: nothing it started writes
// to the workspace afterwards. Stopping kills bwrap; its processes die
// with the sandbox's PID namespace, which can outlive bwrap by a moment
// (nswait_linux.go). Here a loop in the background and one in the
// foreground keep rewriting a counter until the timeout stops them.
func TestNothingRunsOnAfterACommandIsStopped(t *testing.T) {
	needBwrap(t)
	w := newWorld(t)
	r := w.runner(t, sandbox.Config{Timeout: 300 * time.Millisecond})
	for i := range 3 {
		res := run(t, r, `(i=0; while :; do i=$((i+1)); echo $i > bg; done) & i=0; while :; do i=$((i+1)); echo $i > fg; done`)
		if !res.TimedOut {
			t.Fatalf("round %d: the loop was not stopped: %+v", i, res)
		}
		before := counters(w.ws)
		time.Sleep(200 * time.Millisecond)
		if after := counters(w.ws); after != before {
			t.Fatalf("round %d: the counters moved after Run returned: %q, then %q", i, before, after)
		}
	}
}

func counters(dir string) string {
	bg, _ := os.ReadFile(filepath.Join(dir, "bg"))
	fg, _ := os.ReadFile(filepath.Join(dir, "fg"))
	return string(bg) + "/" + string(fg)
}
