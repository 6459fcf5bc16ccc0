package mcpserver_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/mcpserver"
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

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A run's warning reaches the client as a progress step, in the words the
// command line prints, and the server's log (its stderr) once.
func TestARunsWarningIsAProgressStepAndOnTheServersStderr(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "c.yaml", "agent: {id: a, backend: {type: sim, model: m1, upload_files: true}}\n")
	var stderr lockedBuffer
	s := mcpserver.New(&app.Env{Getenv: func(string) string { return "" }, WorkDir: t.TempDir(), Stderr: &stderr},
		mcpserver.Options{NoLogs: true, ConfigDir: dir})
	t.Cleanup(s.Close)
	c := connect(t, transports[0].connect(t, s))
	res, out := call(ctx30(t), t, c, map[string]any{"question": "q", "config": "c"})
	if res.IsError || out.Status != "completed" {
		t.Fatalf("%v %+v", res.IsError, out)
	}
	const want = "warning: agent.backend.upload_files: 'upload_files' is accepted but ignored"
	steps := c.steps()
	if len(steps) == 0 || !strings.Contains(steps[0].Message, want) {
		t.Errorf("first progress step %+v, want the warning", steps[:min(1, len(steps))])
	}
	if n := strings.Count(stderr.String(), want); n != 1 {
		t.Errorf("the warning is on the server's stderr %d times, want 1:\n%s", n, stderr.String())
	}
}
