package copilot_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/agent/cli/copilot"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// copilotPath finds the pinned CLI (tests/cli-agents, `npm ci` there) or
// one on PATH; without it the test is skipped, except in CI, where it fails.
func copilotPath(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the CLI agents' tests run on Linux")
	}
	local, _ := filepath.Abs("../../../../tests/cli-agents/node_modules/.bin/copilot")
	if _, err := os.Stat(local); err == nil {
		return local
	}
	p, err := cli.Find(copilot.Vendor{})
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("Copilot CLI is not installed (run npm ci in tests/cli-agents): %v", err)
	}
	t.Skipf("Copilot CLI is not installed (run npm ci in tests/cli-agents): %v", err)
	return ""
}

func unique(t *testing.T) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newAgent is a copilot agent against the simulator at base, in a
// fresh workspace with a fresh private home; model is unique to the test,
// so its processes can be told from others'.
func newAgent(t *testing.T, base, model string) *cli.Agent {
	t.Helper()
	dir := t.TempDir()
	ws, home := filepath.Join(dir, "workspace"), filepath.Join(dir, "home")
	for _, d := range []string{ws, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	a := &cli.Agent{ID: "agent_a", Vendor: copilot.Vendor{}, Path: copilotPath(t), Model: model, BaseURL: base,
		APIKey: "sim-key", Workdir: ws, Home: home}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

const question = "<ORIGINAL MESSAGE> What is two plus two? <END OF ORIGINAL MESSAGE>"

// turn runs one task to its end, answering each proposal with verdict.
func turn(t *testing.T, a *cli.Agent, task agent.Task, verdict coord.Verdict) (proposals []agent.Propose, texts []string, tools []agent.ToolUsed, calls []agent.ModelCall, done agent.Done) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	inbox := agent.NewInbox()
	ended := false
	for o := range a.Run(ctx, task, inbox) {
		switch o := o.(type) {
		case agent.Propose:
			proposals = append(proposals, o)
			inbox.Post(agent.Verdict{Verdict: verdict})
		case agent.Text:
			texts = append(texts, o.Text)
		case agent.ToolUsed:
			tools = append(tools, o)
		case agent.ModelCall:
			calls = append(calls, o)
		case agent.Done:
			done, ended = o, true
		}
	}
	if !ended {
		t.Fatal("the task ended without Done")
	}
	return
}

// offeredAndCalled says whether the simulator offered the CLI the workflow
// tool under its MCP name and scripted a call of it.
// prefix is how Copilot CLI names the workflow server's tools.
const prefix = "massgen-"

func offeredAndCalled(recs []llmsim.Record, tool, step string) bool {
	for _, r := range recs {
		if slices.Contains(r.Tools, prefix+tool) && r.Step == step {
			return true
		}
	}
	return false
}

func checkUsage(t *testing.T, done agent.Done, calls []agent.ModelCall) {
	t.Helper()
	t.Logf("usage %+v, model calls %+v", done.Usage, calls)
	if done.Usage.InputTokens == 0 || done.Usage.OutputTokens == 0 {
		t.Errorf("usage %+v, want the CLI's counts", done.Usage)
	}
	var sum int64
	for _, c := range calls {
		sum += c.Usage.InputTokens
	}
	if len(calls) == 0 || sum != done.Usage.InputTokens {
		t.Errorf("model calls %+v do not add up to the task's usage %+v", calls, done.Usage)
	}
}

// A coordination turn: the CLI is offered the workflow tools over MCP,
// calls new_answer, the proposal comes out, the accepted verdict goes back
// as the tool's result, and the turn ends without failure, with usage.
func TestCoordinationTurnAnswersThroughTheWorkflowServer(t *testing.T) {
	t.Parallel() // each waits on its own CLI process most of the time
	sim, base := simtest.Start(t, "")
	model := "cop-answer-" + unique(t)
	a := newAgent(t, base, model)
	task := agent.Task{Kind: agent.TaskCoordinate, System: "You are agent_a on a team. Answer with new_answer.", User: question, Question: "What is two plus two?"}
	props, _, _, calls, done := turn(t, a, task, coord.Verdict{Outcome: coord.Accepted, Label: "agent1"})
	if done.Failure != nil {
		t.Fatalf("failure: %+v (requests %q)", done.Failure, steps(sim.Requests()))
	}
	if len(props) != 1 || props[0].Action.Kind != coord.ActNewAnswer || !strings.Contains(props[0].Action.Content, "[sim model "+model+"]") {
		t.Fatalf("proposals %+v, want the simulator's answer", props)
	}
	t.Logf("requests: %q", steps(sim.Requests()))
	if !offeredAndCalled(sim.Requests(), "new_answer", "answer") {
		t.Errorf("no request offered and called the prefixed new_answer: %+v", steps(sim.Requests()))
	}
	checkUsage(t, done, calls)
	if len(done.State) == 0 {
		t.Error("no session id kept")
	}
	// The agent's instructions reached the model (the custom agent).
	if r := sim.Requests()[0]; len(r.Messages) == 0 || !strings.Contains(r.Messages[0].Content, "You are agent_a on a team") {
		t.Errorf("the system prompt lacks the agent's instructions")
	}
}

// A vote turn: with answers shown, the CLI votes through the prefixed vote.
func TestCoordinationTurnVotes(t *testing.T) {
	t.Parallel() // each waits on its own CLI process most of the time
	sim, base := simtest.Start(t, "")
	a := newAgent(t, base, "cop-vote-"+unique(t))
	task := agent.Task{Kind: agent.TaskCoordinate, System: "Vote for the best answer.", User: question,
		Answers: []coord.Answer{{Label: "agent1", Content: "Four."}, {Label: "agent2", Content: "4"}}, Epoch: 2}
	props, _, _, calls, done := turn(t, a, task, coord.Verdict{Outcome: coord.Accepted, Label: "agent1", Target: "agent_b"})
	if done.Failure != nil {
		t.Fatalf("failure: %+v", done.Failure)
	}
	if len(props) != 1 || props[0].Action.Kind != coord.ActVote || props[0].Action.Label != "agent1" || props[0].Seen != 2 {
		t.Fatalf("proposals %+v, want a vote for agent1", props)
	}
	if !offeredAndCalled(sim.Requests(), "vote", "vote") {
		t.Errorf("no request offered and called the prefixed vote: %+v", steps(sim.Requests()))
	}
	checkUsage(t, done, calls)
}

// A presentation has no workflow tools: the CLI's final text is Done.Text.
func TestPresentationText(t *testing.T) {
	t.Parallel() // each waits on its own CLI process most of the time
	model := "cop-present-" + unique(t)
	sim, base := simtest.Start(t, "models:\n  "+model+":\n    final: \"Two plus two is four.\"\n")
	a := newAgent(t, base, model)
	task := agent.Task{Kind: agent.TaskPresent, System: "Present the final answer.", User: question,
		Answers: []coord.Answer{{Label: "agent1", Content: "Four."}}}
	_, texts, _, calls, done := turn(t, a, task, coord.Verdict{})
	if done.Failure != nil {
		t.Fatalf("failure: %+v", done.Failure)
	}
	if done.Text != "Two plus two is four." || strings.Join(texts, "") != done.Text {
		t.Errorf("Done.Text %q, streamed %q", done.Text, texts)
	}
	for _, r := range sim.Requests() {
		if slices.ContainsFunc(r.Tools, func(s string) bool { return strings.HasPrefix(s, prefix) }) {
			t.Errorf("a presentation was offered workflow tools: %v", r.Tools)
		}
	}
	checkUsage(t, done, calls)
}

// Under bubblewrap, in the agent's view, the CLI still works, and a file
// its own write tool writes lands in the workspace and nowhere else.
func TestSandboxedCLIWritesOnlyItsWorkspace(t *testing.T) {
	t.Parallel() // each waits on its own CLI process most of the time
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	model := "cop-write-" + unique(t)
	sim, base := simtest.Start(t, "models:\n  "+model+":\n    steps:\n"+
		"      - calls:\n          - {name: bash, arguments: '{\"command\":\"mkdir -p notes && printf \\\"written by copilot\\\" > notes/hello.txt\",\"description\":\"Write the note\"}'}\n"+
		"      - expect_results:\n          - {name: bash}\n        answer: \"I wrote notes/hello.txt.\"\n")
	a := newAgent(t, base, model)
	g, err := workspace.New(workspace.Policy{Agent: a.ID, Workspace: a.Workdir})
	if err != nil {
		t.Fatal(err)
	}
	a.Wrap = func(cmd *exec.Cmd, env []string) {
		sandbox.ProgramWith(bwrap, g, cmd, env, sandbox.ProgramOptions{Writable: []string{a.Home}})
	}
	task := agent.Task{Kind: agent.TaskCoordinate, System: "Write the file, then answer.", User: question}
	props, _, tools, _, done := turn(t, a, task, coord.Verdict{Outcome: coord.Accepted, Label: "agent1"})
	if done.Failure != nil {
		t.Fatalf("failure: %+v (steps %v)", done.Failure, steps(sim.Requests()))
	}
	if len(props) != 1 || props[0].Action.Content != "I wrote notes/hello.txt." {
		t.Fatalf("proposals %+v", props)
	}
	b, err := os.ReadFile(filepath.Join(a.Workdir, "notes", "hello.txt"))
	if err != nil || string(b) != "written by copilot" {
		t.Fatalf("the workspace's file: %q, %v", b, err)
	}
	if len(tools) != 1 || tools[0].Tool != "bash" || tools[0].IsError || !strings.Contains(tools[0].Args, "hello.txt") {
		t.Errorf("tools used: %+v, want bash", tools)
	}
	// Nowhere else: not in the CLI's home, not beside the workspace.
	root := filepath.Dir(a.Workdir)
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "hello.txt" && p != filepath.Join(a.Workdir, "notes", "hello.txt") {
			t.Errorf("the file is also at %s", p)
		}
		return nil
	})
}

// Cancelling a task mid-turn ends Run promptly and leaves no process of
// the CLI behind.
func TestCancelKillsTheCLI(t *testing.T) {
	t.Parallel() // each waits on its own CLI process most of the time
	model := "cop-hang-" + unique(t)
	sim, base := simtest.Start(t, "models:\n  "+model+":\n    always: {fault: hang}\n")
	a := newAgent(t, base, model)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ended := make(chan agent.Done, 1)
	go func() {
		var done agent.Done
		for o := range a.Run(ctx, agent.Task{Kind: agent.TaskCoordinate, User: question}, agent.NewInbox()) {
			if d, ok := o.(agent.Done); ok {
				done = d
			}
		}
		ended <- done
	}()
	wctx, wcancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer wcancel()
	if err := sim.WaitFor(wctx, func(rs []llmsim.Record) bool { return len(rs) > 0 }); err != nil {
		t.Fatalf("the CLI never reached the simulator: %v", err)
	}
	procs := clitest.Processes(t, model)
	if len(procs) == 0 {
		t.Fatal("no process of the CLI found while it waits: the check below would prove nothing")
	}
	for _, p := range procs {
		if strings.Contains(p, "npm-loader.js") {
			t.Errorf("the npm launcher runs (%v): Copilot's native binary should run directly", procs)
		}
	}
	clitest.Cancel(t, cancel, ended)
	if ps := clitest.Processes(t, model); len(ps) > 0 {
		t.Errorf("processes of the CLI left: %v", ps)
	}
}

func steps(recs []llmsim.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Model+":"+r.Step+":"+r.Outcome+" "+strings.Join(r.Tools, ","))
	}
	return out
}

// A key the provider refuses fails the task as an auth failure with the
// provider's status, not as a crashed program.
func TestRefusedKeyIsAnAuthFailure(t *testing.T) {
	t.Parallel() // each waits on its own CLI process most of the time
	model := "cop-401-" + unique(t)
	_, base := simtest.Start(t, "models:\n  "+model+":\n    always: {fault: \"401\"}\n")
	a := newAgent(t, base, model)
	_, _, _, _, done := turn(t, a, agent.Task{Kind: agent.TaskPresent, User: question}, coord.Verdict{})
	if done.Failure == nil || done.Failure.Kind != coord.FailAuth || done.Failure.Status != 401 || done.Failure.Agent != "agent_a" {
		t.Fatalf("failure %+v, want auth (401)", done.Failure)
	}
}

// The workspace does not configure the CLI: a project's instructions
// (AGENTS.md, .github/copilot-instructions.md), its custom agent of the
// same name, its MCP servers and .env are not used.
func TestTheWorkspaceDoesNotConfigureTheCLI(t *testing.T) {
	t.Parallel() // each waits on its own CLI process most of the time
	sim, base := simtest.Start(t, "")
	a := newAgent(t, base, "cop-planted-"+unique(t))
	plant := map[string]string{
		"AGENTS.md":                              "PLANTED-AGENTS-MD",
		"CLAUDE.md":                              "PLANTED-CLAUDE-MD",
		".github/copilot-instructions.md":        "PLANTED-COPILOT-INSTRUCTIONS",
		".github/instructions/x.instructions.md": "---\napplyTo: \"**\"\n---\nPLANTED-INSTRUCTIONS",
		".github/agents/massgen.agent.md":        "---\nname: massgen\ndescription: planted\n---\nPLANTED-AGENT",
		".copilot/mcp-config.json":               `{"mcpServers": {"planted": {"type": "local", "command": "sh", "args": ["-c", "touch planted-mcp; sleep 30"], "tools": ["*"]}}}`,
		".mcp.json":                              `{"mcpServers": {"planted2": {"command": "sh", "args": ["-c", "touch planted-mcp2; sleep 30"]}}}`,
		".vscode/mcp.json":                       `{"servers": {"planted3": {"command": "sh", "args": ["-c", "touch planted-mcp3; sleep 30"]}}}`,
		".env":                                   "COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:9/v1\nCOPILOT_MODEL=planted\n",
	}
	for name, content := range plant {
		p := filepath.Join(a.Workdir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	task := agent.Task{Kind: agent.TaskCoordinate, System: "You are agent_a.", User: question}
	_, _, _, _, done := turn(t, a, task, coord.Verdict{Outcome: coord.Accepted, Label: "agent1"})
	if done.Failure != nil {
		t.Fatalf("failure: %+v", done.Failure)
	}
	recs := sim.Requests()
	if len(recs) == 0 {
		t.Fatal("no request")
	}
	for _, r := range recs {
		for _, m := range r.Messages {
			if i := strings.Index(m.Content, "PLANTED"); i >= 0 {
				t.Errorf("a planted file reached the model: %q", m.Content[max(0, i-200):min(len(m.Content), i+60)])
			}
		}
		if slices.ContainsFunc(r.Tools, func(s string) bool { return strings.Contains(s, "planted") }) {
			t.Errorf("a planted MCP server's tools were offered: %v", r.Tools)
		}
		if !strings.HasPrefix(r.Model, "cop-planted-") {
			t.Errorf("model %q", r.Model)
		}
	}
	if !strings.Contains(recs[0].Messages[0].Content, "You are agent_a.") {
		t.Error("the agent's own instructions are missing")
	}
	for _, f := range []string{"planted-mcp", "planted-mcp2", "planted-mcp3"} {
		if _, err := os.Stat(filepath.Join(a.Workdir, f)); err == nil {
			t.Errorf("%s ran", f)
		}
	}
}

// provider_type and wire_api choose the provider's API: Anthropic's
// Messages and OpenAI's Responses work as Chat Completions does.
func TestOtherProviderAPIs(t *testing.T) {
	t.Parallel() // each waits on its own CLI process most of the time
	for _, tc := range []struct {
		options map[string]any
		wire    string
	}{
		{map[string]any{"provider_type": "anthropic"}, llmsim.WireAnthropic},
		{map[string]any{"wire_api": "responses"}, llmsim.WireResponses},
	} {
		t.Run(tc.wire, func(t *testing.T) {
			model := "cop-" + tc.wire + "-" + unique(t)
			sim, base := simtest.Start(t, "models:\n  "+model+":\n    final: \"Four.\"\n")
			a := newAgent(t, base, model)
			a.Options = tc.options
			_, _, _, calls, done := turn(t, a, agent.Task{Kind: agent.TaskPresent, System: "Present.", User: question}, coord.Verdict{})
			if done.Failure != nil {
				t.Fatalf("failure: %+v", done.Failure)
			}
			recs := sim.Requests()
			if done.Text != "Four." || len(recs) == 0 || recs[0].Wire != tc.wire {
				t.Errorf("text %q, requests %+v", done.Text, steps(recs))
			}
			checkUsage(t, done, calls)
		})
	}
}
