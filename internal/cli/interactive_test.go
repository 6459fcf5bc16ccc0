package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/store"
)

// massgenIn runs the CLI in-process in dir, with stdin.
func massgenIn(t *testing.T, ctx context.Context, dir, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}
	code := Run(ctx, args, Env{Getenv: getenv, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, WorkDir: dir})
	return result{code: code, stdout: out.String(), stderr: errb.String(), dir: dir}
}

// contexts returns the prompts (context.txt) of a run's agents.
func contexts(t *testing.T, runDir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(runDir, "agent_*", "*", "context.txt"))
	if len(files) == 0 {
		t.Fatalf("no context.txt in %s", runDir)
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

func sessionTurns(t *testing.T, dir string) (list []store.Session, turns map[string][]store.Turn) {
	t.Helper()
	st, err := store.Open(t.Context(), store.DefaultPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if list, err = st.Sessions(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	turns = map[string][]store.Turn{}
	for _, s := range list {
		if turns[s.ID], err = st.Turns(t.Context(), s.ID); err != nil {
			t.Fatal(err)
		}
	}
	return list, turns
}

// Interactive mode: each turn sees the earlier ones, logs in turn_<N>/ of
// the session's log directory, and is recorded with its answers and votes;
// a """ block is one question; /reset really forgets (a new session, no
// history); EOF ends with exit 0.
func TestInteractiveTurnsSeeTheEarlierTurnsAndResetForgetsThem(t *testing.T) {
	dir := t.TempDir()
	stdin := "What is the capital of France?\n" +
		"\"\"\"\nAnd of Italy?\nAnswer in one word.\n\"\"\"\n" +
		"/inspect\n/status\n/save conv.md\n/context docs\n/bogus\n\n" +
		"/reset\nA fresh question\n"
	r := massgenIn(t, t.Context(), dir, stdin, "--config", "@examples/sim_three_agents")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	list, turns := sessionTurns(t, dir)
	if len(list) != 2 {
		t.Fatalf("%d sessions, want 2 (one before /reset, one after)", len(list))
	}
	first, second := list[1], list[0] // newest first
	if len(turns[first.ID]) != 2 || len(turns[second.ID]) != 1 {
		t.Fatalf("turns per session: %d and %d, want 2 and 1", len(turns[first.ID]), len(turns[second.ID]))
	}
	t1, t2 := turns[first.ID][0], turns[first.ID][1]
	if t2.Question != "And of Italy?\nAnswer in one word." {
		t.Errorf("the \"\"\" block became %q", t2.Question)
	}
	for _, tr := range []store.Turn{t1, t2} {
		if tr.Status != store.TurnCompleted || len(tr.Answers) != 3 || len(tr.Votes) != 3 || tr.Winner == "" || tr.Final == "" || len(tr.Usage) != 3 {
			t.Errorf("turn %d recorded as %+v", tr.N, tr)
		}
	}
	for _, s := range list {
		if s.Status != store.SessionClosed {
			t.Errorf("session %s is %s after the loop ended", s.ID, s.Status)
		}
	}
	// Logs: turn_1 and turn_2 inside the first session's directory.
	if t1.LogDir != filepath.Join(first.LogDir, "turn_1") || t2.LogDir != filepath.Join(first.LogDir, "turn_2") {
		t.Errorf("turn log dirs %s, %s; session dir %s", t1.LogDir, t2.LogDir, first.LogDir)
	}
	// The second turn's prompts carry the first turn as history.
	c2 := contexts(t, t2.LogDir)
	for _, want := range []string{"<CONVERSATION_HISTORY>", "User: What is the capital of France?", "Assistant: " + strings.SplitN(t1.Final, "\n", 2)[0]} {
		if !strings.Contains(c2, want) {
			t.Errorf("turn 2's prompts lack %q", want)
		}
	}
	if c1 := contexts(t, t1.LogDir); strings.Contains(c1, "<CONVERSATION_HISTORY>") {
		t.Error("turn 1's prompts have a history")
	}
	// After /reset: no history at all.
	if c3 := contexts(t, turns[second.ID][0].LogDir); strings.Contains(c3, "CONVERSATION_HISTORY") || strings.Contains(c3, "France") {
		t.Error("the turn after /reset still sees the earlier conversation")
	}
	// The answers (two turns before the reset, one after) on stdout, the
	// commands' replies too.
	for _, want := range []string{"Answers (3):", "Votes (3):", "session:  " + first.ID, "turns:    2 in the history", "saved 2 turns to"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"/context docs: no such file or directory", "unknown command /bogus", "(type a question, or /help)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "conv.md"))
	if err != nil || !strings.Contains(string(md), "## Turn 2") || !strings.Contains(string(md), "And of Italy?") {
		t.Errorf("/save wrote %q (%v)", md, err)
	}
}

func TestInteractiveQuitStopsReadingAndHelpListsTheCommands(t *testing.T) {
	dir := t.TempDir()
	r := massgenIn(t, t.Context(), dir, "/help\n/q\nnever asked\n", "--config", "@examples/sim_single_agent")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, cmd := range []string{"/help", "/status", "/config", "/clear", "/reset", "/quit", "/exit", "/q", "/save", "/inspect", "/context", `"""`, "Alt-Enter"} {
		if !strings.Contains(r.stdout, cmd) {
			t.Errorf("/help does not mention %s", cmd)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".massgen", "massgen_logs")); err == nil {
		t.Error("a question after /q was run")
	}
	if r := massgenIn(t, t.Context(), dir, "/inspect\n", "--config", "@examples/sim_single_agent"); !strings.Contains(r.stderr, "no turn has run") {
		t.Errorf("/inspect before any turn: %s", r.stderr)
	}
}

func TestInputReaderReadsLinesAndBlocks(t *testing.T) {
	in := newInputReader(strings.NewReader("one\n'''\na\n  b\n'''\n\"\"\"inline\"\"\"\n\"\"\"first\nlast\"\"\"\n\"\"\"\ncut by EOF"))
	defer in.stop()
	var got []string
	for {
		q, ok := in.read(t.Context())
		if !ok {
			break
		}
		got = append(got, q)
	}
	want := []string{"one", "a\n  b", "inline", "first\nlast", "cut by EOF"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("read %q, want %q", got, want)
	}
}

// A one-question run is a session too: --continue asks a follow-up with it
// as history, in the same config, logged in turn_2/ of its directory; the
// sessions command lists, shows, exports and deletes it.
func TestContinueAndTheSessionsCommand(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	r := massgenIn(t, ctx, dir, "", "--config", "@examples/sim_single_agent", "What is the capital of France?")
	if r.code != 0 || !strings.Contains(r.stderr, "session: session_") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r = massgenIn(t, ctx, dir, "", "--continue", "And of Italy?")
	if r.code != 0 || !strings.Contains(r.stderr, "continuing after 1 turn") {
		t.Fatalf("--continue: exit %d: %s", r.code, r.stderr)
	}
	list, turns := sessionTurns(t, dir)
	if len(list) != 1 || len(turns[list[0].ID]) != 2 {
		t.Fatalf("sessions %+v", list)
	}
	s := list[0]
	t1, t2 := turns[s.ID][0], turns[s.ID][1]
	if t1.LogDir != s.LogDir || t2.LogDir != filepath.Join(s.LogDir, "turn_2") {
		t.Errorf("log dirs: session %s, turns %s and %s", s.LogDir, t1.LogDir, t2.LogDir)
	}
	if c := contexts(t, t2.LogDir); !strings.Contains(c, "User: What is the capital of France?") {
		t.Error("the continued turn does not see the first")
	}
	if s.ConfigPath != "@examples/sim_single_agent" {
		t.Errorf("config path %q", s.ConfigPath)
	}

	r = massgenIn(t, ctx, dir, "", "sessions", "list")
	if r.code != 0 || !strings.Contains(r.stdout, s.ID) || !strings.Contains(r.stdout, "What is the capital of France?") {
		t.Errorf("sessions list: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := massgenIn(t, ctx, dir, "", "--list-sessions"); !strings.Contains(r.stdout, s.ID) {
		t.Errorf("--list-sessions: %s", r.stdout)
	}
	r = massgenIn(t, ctx, dir, "", "sessions", "show", s.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "## Turn 2 (completed)") || !strings.Contains(r.stdout, "### Votes") {
		t.Errorf("sessions show: %s %s", r.stdout, r.stderr)
	}
	r = massgenIn(t, ctx, dir, "", "sessions", "export", s.ID[:len(s.ID)-2], "--format", "json")
	var doc struct {
		ID    string `json:"session_id"`
		Turns []struct {
			Question string            `json:"question"`
			Answers  []json.RawMessage `json:"answers"`
			Votes    []json.RawMessage `json:"votes"`
			Final    string            `json:"final_answer"`
		} `json:"turns"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("export json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	if doc.ID != s.ID || len(doc.Turns) != 2 || doc.Turns[1].Question != "And of Italy?" || len(doc.Turns[0].Answers) != 1 || len(doc.Turns[0].Votes) != 1 || doc.Turns[1].Final == "" {
		t.Errorf("export: %+v", doc)
	}
	if r := massgenIn(t, ctx, dir, "", "sessions", "export", s.ID, "--format", "pdf"); r.code != ExitConfig {
		t.Errorf("--format pdf: exit %d", r.code)
	}
	if r := massgenIn(t, ctx, dir, "", "sessions", "delete", s.ID); r.code != 0 || !strings.Contains(r.stdout, "deleted session") {
		t.Errorf("delete: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := massgenIn(t, ctx, dir, "", "--session-id", s.ID, "q"); r.code != ExitConfig || !strings.Contains(r.stderr, "no such session") {
		t.Errorf("--session-id of a deleted session: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(t1.LogDir); err != nil {
		t.Errorf("delete removed the logs: %v", err)
	}
}

// Ctrl+C during a turn (the context cancelled) exits 4 and records the
// turn as interrupted with the answers it had accepted; --continue without
// a question finishes it from them.
func TestInterruptedTurnIsRecordedAndResumed(t *testing.T) {
	dir := t.TempDir()
	team := func(slow string) string {
		return "agents:\n  - {id: quick, backend: {type: sim, model: sim-quick}}\n" +
			"  - {id: slow, backend: {type: sim, model: sim-slow" + slow + "}}\n"
	}
	for name, body := range map[string]string{"slow.yaml": team(", ttft_ms: 30000"), "fast.yaml": team("")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan result)
	go func() { done <- massgenIn(t, ctx, dir, "", "--config", "slow.yaml", "Slow question") }()
	// Wait for quick's accepted answer in the store, then "press Ctrl+C".
	deadline, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	for !hasAnswer(t, dir) {
		select {
		case <-deadline.Done():
			cancel()
			t.Fatalf("no answer accepted: %v", (<-done).stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	r := <-done
	if r.code != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s", r.code, ExitInterrupted, r.stderr)
	}
	list, turns := sessionTurns(t, dir)
	tr := turns[list[0].ID][0]
	if tr.Status != store.TurnInterrupted || len(tr.Answers) != 1 || tr.Answers[0].Agent != "quick" {
		t.Fatalf("interrupted turn recorded as %+v", tr)
	}
	r = massgenIn(t, t.Context(), dir, "", "--continue", "--config", "fast.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, "resuming interrupted turn 1: Slow question") {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	_, turns = sessionTurns(t, dir)
	got := turns[list[0].ID]
	if len(got) != 2 || got[1].Status != store.TurnCompleted || got[1].Question != "Slow question" || got[1].Answers[0].Content != tr.Answers[0].Content {
		t.Fatalf("after resuming: %+v", got)
	}
}

func hasAnswer(t *testing.T, dir string) bool {
	if _, err := os.Stat(store.DefaultPath(dir)); err != nil {
		return false
	}
	list, turns := sessionTurns(t, dir)
	return len(list) == 1 && len(turns[list[0].ID]) == 1 && len(turns[list[0].ID][0].Answers) > 0
}
