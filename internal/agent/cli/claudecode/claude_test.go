package claudecode_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/claudecode"
	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// claude finds the pinned CLI (tests/cli-agents, npm ci there) or one on
// PATH; without it the tests skip, except in CI, where it must be there.
func claude(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../../tests/cli-agents/node_modules/.bin/claude")
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(claudecode.Program); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("claude is not installed (npm ci in tests/cli-agents)")
	}
	t.Skip("claude is not installed (npm ci in tests/cli-agents)")
	return ""
}

// newAgent is a claude_code agent on the simulator with a fresh workspace
// and home.
func newAgent(t *testing.T, base string) *cli.Agent {
	t.Helper()
	root := t.TempDir()
	a := &cli.Agent{ID: "cc", Vendor: claudecode.Vendor{}, Path: claude(t), Model: "sim-claude", BaseURL: base,
		APIKey: "sk-sim-test", Workdir: filepath.Join(root, "workspace"), Home: filepath.Join(root, "home")}
	for _, d := range []string{a.Workdir, a.Home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

const system = "You are a member of a team. End by calling new_answer with your answer, or vote for the best answer."

// coordinate runs one coordination turn, accepting every proposal, and
// returns its proposals, the other outcomes and the Done.
func coordinate(t *testing.T, a *cli.Agent, task agent.Task) ([]agent.Propose, []agent.Outcome, agent.Done) {
	t.Helper()
	inbox := agent.NewInbox()
	var props []agent.Propose
	var others []agent.Outcome
	var done *agent.Done
	for o := range a.Run(testCtx(t), task, inbox) {
		switch o := o.(type) {
		case agent.Propose:
			props = append(props, o)
			inbox.Post(agent.Verdict{Verdict: coord.Verdict{Outcome: coord.Accepted, Label: "agent1"}})
		case agent.Done:
			done = &o
		default:
			others = append(others, o)
		}
	}
	if done == nil {
		t.Fatal("the turn ended without Done")
	}
	return props, others, *done
}

// offered reports whether the simulator's records show tool offered to the
// model and the model's step.
func workflowRecord(t *testing.T, sim *llmsim.Server, tool, step string) {
	t.Helper()
	for _, r := range sim.Requests() {
		if r.Wire == llmsim.WireAnthropic && slices.Contains(r.Tools, tool) && r.Step == step {
			return
		}
	}
	for _, r := range sim.Requests() {
		t.Logf("record %d: wire %s model %s step %s tools %v", r.ID, r.Wire, r.Model, r.Step, r.Tools)
	}
	t.Fatalf("no request offered %s and got step %s", tool, step)
}

func TestCoordinationTurnAnswers(t *testing.T) {
	sim, base := simtest.Start(t, "models:\n  sim-claude:\n    steps:\n      - answer: \"Four: 2 + 2 = 4.\"\n")
	a := newAgent(t, base)
	props, others, done := coordinate(t, a, agent.Task{Kind: agent.TaskCoordinate, System: system,
		User: "<ORIGINAL MESSAGE> What is 2 + 2? <END OF ORIGINAL MESSAGE>", Question: "What is 2 + 2?"})
	if done.Failure != nil {
		t.Fatalf("failure: %+v", done.Failure)
	}
	if len(props) != 1 || props[0].Action.Kind != coord.ActNewAnswer || props[0].Action.Content != "Four: 2 + 2 = 4." {
		t.Fatalf("proposals %+v", props)
	}
	workflowRecord(t, sim, "mcp__massgen__new_answer", "answer")
	if done.Usage.InputTokens == 0 || done.Usage.OutputTokens == 0 {
		t.Errorf("usage %+v", done.Usage)
	}
	calls := 0
	for _, o := range others {
		if mc, ok := o.(agent.ModelCall); ok {
			calls++
			if mc.Model != "sim-claude" || mc.Usage.InputTokens == 0 {
				t.Errorf("model call %+v", mc)
			}
		}
		if tu, ok := o.(agent.ToolUsed); ok && strings.Contains(tu.Tool, "new_answer") {
			t.Errorf("the workflow call was reported as the agent's own tool: %+v", tu)
		}
	}
	if calls == 0 {
		t.Error("no ModelCall")
	}
	if len(done.State) == 0 {
		t.Error("no session kept")
	}
}

func TestCoordinationTurnVotes(t *testing.T) {
	sim, base := simtest.Start(t, "")
	a := newAgent(t, base)
	answers := []coord.Answer{{Label: "agent1", Agent: "x", Content: "Paris is the capital of France."},
		{Label: "agent2", Agent: "y", Content: "Lyon."}}
	props, _, done := coordinate(t, a, agent.Task{Kind: agent.TaskCoordinate, System: system,
		User: "<ORIGINAL MESSAGE> Capital of France? <END OF ORIGINAL MESSAGE>", Question: "Capital of France?",
		Answers: answers, Epoch: 1})
	if done.Failure != nil {
		t.Fatalf("failure: %+v", done.Failure)
	}
	if len(props) != 1 || props[0].Action.Kind != coord.ActVote || props[0].Action.Label != "agent1" || props[0].Seen != 1 {
		t.Fatalf("proposals %+v", props)
	}
	workflowRecord(t, sim, "mcp__massgen__vote", "vote")
	for _, r := range sim.Requests() {
		if slices.Contains(r.Tools, "mcp__massgen__vote") && !slices.Equal(r.VoteEnum, []string{"agent1", "agent2"}) {
			t.Errorf("vote enum %v", r.VoteEnum)
		}
	}
	if done.Usage.Total() == 0 {
		t.Errorf("usage %+v", done.Usage)
	}
}

func TestPresentation(t *testing.T) {
	_, base := simtest.Start(t, "models:\n  sim-claude:\n    final: \"Paris is the capital of France.\"\n")
	a := newAgent(t, base)
	var text strings.Builder
	var done *agent.Done
	for o := range a.Run(testCtx(t), agent.Task{Kind: agent.TaskPresent, System: "Present the final answer.",
		User: "Capital of France?"}, agent.NewInbox()) {
		switch o := o.(type) {
		case agent.Text:
			text.WriteString(o.Text)
		case agent.Done:
			done = &o
		}
	}
	if done == nil || done.Failure != nil {
		t.Fatalf("done %+v", done)
	}
	if done.Text != "Paris is the capital of France." || text.String() != done.Text {
		t.Errorf("text %q, streamed %q", done.Text, text.String())
	}
	if done.Usage.Total() == 0 {
		t.Errorf("usage %+v", done.Usage)
	}
}

// A provider's refusal is the task's failure, of the provider's kind.
func TestAuthErrorIsAnAuthFailure(t *testing.T) {
	_, base := simtest.Start(t, "models:\n  sim-claude:\n    always: {fault: \"401\"}\n")
	a := newAgent(t, base)
	var done *agent.Done
	for o := range a.Run(testCtx(t), agent.Task{Kind: agent.TaskPresent, System: "Present.", User: "Hi"}, agent.NewInbox()) {
		if d, ok := o.(agent.Done); ok {
			done = &d
		}
	}
	if done == nil || done.Failure == nil {
		t.Fatalf("done %+v", done)
	}
	if done.Failure.Kind != coord.FailAuth || done.Failure.Status != 401 {
		t.Errorf("failure %+v", done.Failure)
	}
	if strings.Contains(done.Failure.Message, "sk-sim-test") {
		t.Errorf("the key is in the failure: %s", done.Failure.Message)
	}
}

// Cancelling a turn mid-request ends Run at once and leaves no process of
// the CLI behind.
func TestCancelStopsTheCLI(t *testing.T) {
	sim, base := simtest.Start(t, "models:\n  sim-claude:\n    steps:\n      - fault: hang\n")
	a := newAgent(t, base)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	go func() {
		_ = sim.WaitFor(ctx, func(rs []llmsim.Record) bool { return len(rs) > 0 && !rs[0].FirstByte.IsZero() })
		cancel()
	}()
	var done *agent.Done
	for o := range a.Run(ctx, agent.Task{Kind: agent.TaskCoordinate, System: system, User: "Hang."}, agent.NewInbox()) {
		if d, ok := o.(agent.Done); ok {
			done = &d
		}
	}
	if done == nil || done.Failure == nil || done.Failure.Kind != coord.FailCancelled {
		t.Fatalf("done %+v", done)
	}
	// A process sent SIGKILL is gone once the kernel has delivered it:
	// look a few times before calling it left behind.
	left := clitest.Processes(t, a.Home)
	for i := 0; i < 40 && len(left) > 0; i++ {
		time.Sleep(50 * time.Millisecond)
		left = clitest.Processes(t, a.Home)
	}
	if len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// Under bubblewrap, as massgen runs it, Claude Code still works, and a
// file its Write tool writes lands in the workspace; one it writes outside
// lands nowhere on the host.
func TestSandboxedWriteStaysInTheWorkspace(t *testing.T) {
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	// The scenario is written once the paths are known.
	ws := filepath.Join(root, "workspace")
	sc := fmt.Sprintf(`models:
  sim-claude:
    steps:
      - calls:
          - {name: Write, arguments: '{"file_path":"%s/hello.txt","content":"hello from claude\n"}'}
      - calls:
          - {name: Write, arguments: '{"file_path":"%s/escape.txt","content":"x"}'}
      - answer: "I wrote hello.txt."
`, ws, outside)
	sim, base := simtest.Start(t, sc)
	a := newAgent(t, base)
	a.Workdir = ws
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := workspace.New(workspace.Policy{Agent: "cc", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	a.Wrap = func(cmd *exec.Cmd, env []string) {
		sandbox.ProgramWith(bwrap, g, cmd, env, sandbox.ProgramOptions{Writable: []string{a.Home}})
	}
	props, others, done := coordinate(t, a, agent.Task{Kind: agent.TaskCoordinate, System: system, User: "Write hello.txt."})
	if done.Failure != nil {
		t.Fatalf("failure: %+v", done.Failure)
	}
	if len(props) != 1 || props[0].Action.Content != "I wrote hello.txt." {
		t.Fatalf("proposals %+v", props)
	}
	b, err := os.ReadFile(filepath.Join(ws, "hello.txt"))
	if err != nil || string(b) != "hello from claude\n" {
		t.Fatalf("hello.txt: %q, %v", b, err)
	}
	var writes []agent.ToolUsed
	for _, o := range others {
		if tu, ok := o.(agent.ToolUsed); ok && tu.Tool == "Write" {
			writes = append(writes, tu)
		}
	}
	for _, w := range writes {
		t.Logf("Write %s: %s (error %v)", w.Args, w.Result, w.IsError)
	}
	if len(writes) != 2 || !strings.Contains(writes[0].Args, "hello.txt") {
		t.Errorf("Write calls reported: %+v", writes)
	}
	// hello.txt is the only file written outside the CLI's home.
	var found []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(p, a.Home+string(filepath.Separator)) {
			found = append(found, p)
		}
		if err == nil && d.IsDir() && p == a.Home {
			if _, err := os.Stat(filepath.Join(p, "hello.txt")); err == nil {
				found = append(found, p+"/hello.txt")
			}
		}
		return nil
	})
	if !slices.Equal(found, []string{filepath.Join(ws, "hello.txt")}) {
		t.Errorf("files written: %v", found)
	}
	if len(sim.Requests()) < 3 {
		t.Errorf("%d requests", len(sim.Requests()))
	}
}

// What lies in the workspace (another agent's answer may have put it
// there) does not configure the CLI: neither .claude/settings.json nor a
// CLAUDE.md is read.
func TestWorkspaceDoesNotConfigureTheCLI(t *testing.T) {
	sim, base := simtest.Start(t, "")
	a := newAgent(t, base)
	if err := os.MkdirAll(filepath.Join(a.Workdir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{".claude/settings.json": `{"model":"project-model","env":{"ANTHROPIC_BASE_URL":"http://192.0.2.1"}}`,
		"CLAUDE.md": "PLANTED-INSTRUCTIONS-MARKER"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(a.Workdir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for o := range a.Run(testCtx(t), agent.Task{Kind: agent.TaskPresent, System: "Present.", User: "Hi"}, agent.NewInbox()) {
		if d, ok := o.(agent.Done); ok && d.Failure != nil {
			t.Fatalf("failure %+v", d.Failure)
		}
	}
	recs := sim.Requests()
	if len(recs) == 0 {
		t.Fatal("no request reached the simulator")
	}
	for _, r := range recs {
		if r.Model != "sim-claude" {
			t.Errorf("request for model %q", r.Model)
		}
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "PLANTED-INSTRUCTIONS-MARKER") {
				t.Errorf("CLAUDE.md was read: %.200q", m.Content)
			}
		}
	}
}

// Post-evaluation: Claude Code is offered submit and restart_orchestration
// by the workflow server and its call is the evaluation; a submit, then a
// restart with the model's reason and instructions.
func TestPostEvaluation(t *testing.T) {
	sim, base := simtest.Start(t, `models:
  sim-claude:
    steps:
      - when: evaluation
        restart: "The answer names the wrong city."
        reason: "Check which city is the capital."
`)
	a := newAgent(t, base)
	evaluate := func() agent.Done {
		t.Helper()
		var done *agent.Done
		for o := range a.Run(testCtx(t), agent.Task{Kind: agent.TaskEvaluate, System: "Check the final answer.",
			User: "Question: capital of France? Final answer: Lyon.", Question: "Capital of France?", Final: "Lyon."}, agent.NewInbox()) {
			if d, ok := o.(agent.Done); ok {
				done = &d
			}
		}
		if done == nil {
			t.Fatal("no Done")
		}
		return *done
	}
	done := evaluate()
	ev := done.Evaluation
	if done.Failure != nil || ev == nil || !ev.Restart || ev.Reason != "The answer names the wrong city." ||
		ev.Instructions != "Check which city is the capital." {
		t.Fatalf("done %+v, evaluation %+v", done, ev)
	}
	if ev.Usage.Total() == 0 {
		t.Errorf("usage %+v", ev.Usage)
	}
	workflowRecord(t, sim, "mcp__massgen__restart_orchestration", "restart")
	for _, r := range sim.Requests() {
		if slices.Contains(r.Tools, "mcp__massgen__new_answer") || slices.Contains(r.Tools, "mcp__massgen__vote") {
			t.Errorf("coordination tools offered in a post-evaluation: %v", r.Tools)
		}
	}

	// The default policy submits.
	done = evaluate()
	if ev := done.Evaluation; done.Failure != nil || ev == nil || ev.Restart {
		t.Fatalf("done %+v, evaluation %+v", done, ev)
	}
	workflowRecord(t, sim, "mcp__massgen__submit", "submit")
}

// A rejected action comes back to Claude Code as the tool's error; it
// tries again in the same turn, and the second action is accepted.
func TestRejectedActionIsCorrected(t *testing.T) {
	sim, base := simtest.Start(t, "models:\n  sim-claude:\n    steps:\n      - answer: \"too short\"\n      - answer: \"Four, since 2 + 2 = 4.\"\n")
	a := newAgent(t, base)
	inbox := agent.NewInbox()
	var props []agent.Propose
	var rejected []agent.Rejected
	var done *agent.Done
	for o := range a.Run(testCtx(t), agent.Task{Kind: agent.TaskCoordinate, System: system, User: "What is 2 + 2?"}, inbox) {
		switch o := o.(type) {
		case agent.Propose:
			props = append(props, o)
			v := coord.Verdict{Outcome: coord.Accepted, Label: "agent1"}
			if len(props) == 1 {
				v = coord.Verdict{Outcome: coord.Rejected, Message: "Your answer is too short: explain it."}
			}
			inbox.Post(agent.Verdict{Verdict: v})
		case agent.Rejected:
			rejected = append(rejected, o)
		case agent.Done:
			done = &o
		}
	}
	if done == nil || done.Failure != nil {
		t.Fatalf("done %+v", done)
	}
	if len(props) != 2 || props[1].Action.Content != "Four, since 2 + 2 = 4." || len(rejected) != 1 {
		t.Fatalf("proposals %+v, rejections %+v", props, rejected)
	}
	// The model read the coordinator's reason as the call's result.
	found := false
	for _, r := range sim.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && strings.Contains(m.Content, "too short: explain it") {
				found = true
			}
		}
	}
	if !found {
		t.Error("the rejection's reason never reached the model")
	}
}

// The agent's own MCP servers reach Claude Code beside the workflow
// server: its model is offered their tools under Claude Code's prefix, a
// call runs the server's tool, and the call is reported as the agent's own
// tool use.
func TestAgentsOwnMCPServer(t *testing.T) {
	server, err := filepath.Abs("../../../../tests/mcp-npm/node_modules/.bin/mcp-server-everything")
	if err == nil {
		_, err = os.Stat(server)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("server-everything not installed (npm ci in tests/mcp-npm): %v", err)
	}
	sim, base := simtest.Start(t, `models:
  sim-claude:
    steps:
      - calls:
          - {name: mcp__everything__echo, arguments: '{"message":"hello from the agents server"}'}
      - answer: "The server echoed."
`)
	a := newAgent(t, base)
	a.MCPServers = []cli.MCPServer{{Name: "everything", Command: server, Args: []string{"stdio"}}}
	props, others, done := coordinate(t, a, agent.Task{Kind: agent.TaskCoordinate, System: system, User: "Echo."})
	if done.Failure != nil || len(props) != 1 || props[0].Action.Content != "The server echoed." {
		t.Fatalf("done %+v, proposals %+v", done, props)
	}
	var echo *agent.ToolUsed
	for _, o := range others {
		if tu, ok := o.(agent.ToolUsed); ok && tu.Tool == "mcp__everything__echo" {
			echo = &tu
		}
	}
	if echo == nil || echo.IsError || !strings.Contains(echo.Result, "hello from the agents server") {
		t.Fatalf("echo call %+v", echo)
	}
	workflowRecord(t, sim, "mcp__everything__echo", "calls")
}

// permission_mode: plan is planning without changes: the tools that write
// are not offered, and the turn still ends with its workflow call (Claude
// Code's own plan mode would deny that call, and the turn could not end).
func TestPlanModeWritesNothing(t *testing.T) {
	sim, base := simtest.Start(t, `models:
  sim-claude:
    steps:
      - calls:
          - {name: Write, arguments: '{"file_path":"plan.txt","content":"x"}'}
      - answer: "Planned: 4."
`)
	a := newAgent(t, base)
	a.Options = map[string]any{"permission_mode": "plan"}
	props, _, done := coordinate(t, a, agent.Task{Kind: agent.TaskCoordinate, System: system, User: "Plan."})
	if done.Failure != nil || len(props) != 1 || props[0].Action.Content != "Planned: 4." {
		t.Fatalf("done %+v, proposals %+v", done, props)
	}
	if _, err := os.Stat(filepath.Join(a.Workdir, "plan.txt")); err == nil {
		t.Error("plan mode wrote a file")
	}
	for _, r := range sim.Requests() {
		if slices.Contains(r.Tools, "Write") || slices.Contains(r.Tools, "Bash") {
			t.Errorf("plan mode offered %v", r.Tools)
		}
	}
}
