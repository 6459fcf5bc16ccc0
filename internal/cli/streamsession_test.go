package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --stream-events run is a turn of a session like any run of the CLI
// (the Python package's massgen.run is one): its finished line names the
// session, --session-id asks a follow-up that sees the first turn, and
// --no-logs keeps no session.
func TestStreamEventsRunIsASessionTurn(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (map[string]any, string) {
		t.Helper()
		var out, errb bytes.Buffer
		getenv := func(k string) string {
			if k == "HOME" {
				return dir
			}
			return ""
		}
		code := Run(t.Context(), args, Env{Getenv: getenv, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, WorkDir: dir})
		if code != 0 {
			t.Fatalf("massgen %v: exit %d\n%s", args, code, errb.String())
		}
		lines := streamLines(t, out.String())
		return lines[len(lines)-1], errb.String()
	}
	first, stderr := run("--stream-events", "--config", "@examples/sim_single_agent", "My name is Bobbinsky.")
	id, _ := first["session_id"].(string)
	if !strings.HasPrefix(id, "session_") {
		t.Fatalf("finished line %v: no session_id", first)
	}
	if stderr != "" {
		t.Errorf("stderr must stay quiet under --stream-events, got %q", stderr)
	}
	second, _ := run("--stream-events", "--session-id", id, "What is my name?")
	if second["session_id"] != id {
		t.Fatalf("follow-up's session_id = %v, want %s", second["session_id"], id)
	}
	contexts, _ := filepath.Glob(filepath.Join(second["log_dir"].(string), "agent_*", "*", "context.txt"))
	if len(contexts) == 0 {
		t.Fatalf("no context.txt under %v", second["log_dir"])
	}
	for _, c := range contexts {
		if b, _ := os.ReadFile(c); !strings.Contains(string(b), "Bobbinsky") {
			t.Errorf("%s does not hold the first turn:\n%s", c, b)
		}
	}
	if third, _ := run("--stream-events", "--no-logs", "--config", "@examples/sim_single_agent", "q"); third["session_id"] != nil {
		t.Errorf("--no-logs run has session_id %v", third["session_id"])
	}
}
