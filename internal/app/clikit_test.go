package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/kit/tasks"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/provider"
	"github.com/massgen/massgen/internal/subagent"
	"github.com/massgen/massgen/internal/tool"
)

// runClaude runs cfg (a team with one claude_code agent, cc) on the
// simulator with Claude Code from tests/cli-agents, with logs.
func runClaude(t *testing.T, scenario, cfg string) (*Outcome, *llmsim.Server, string, string) {
	t.Helper()
	return runCLIs(t, []string{"claude_code"}, scenario, cfg)
}

// runCLIs runs cfg, a team of the CLIs of types, on the simulator.
func runCLIs(t *testing.T, types []string, scenario, cfg string) (*Outcome, *llmsim.Server, string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a coding-agent CLI")
	}
	t.Setenv("PATH", cliPath(t, types...))
	srv, url := simtest.Start(t, scenario)
	work := t.TempDir()
	must(t, os.WriteFile(filepath.Join(work, "team.yaml"), []byte(cfg), 0o644))
	vars := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "MASSGEN_CLAUDE_CODE_BASE_URL": url,
		"OPENAI_API_KEY": "sk-test", "MASSGEN_CODEX_BASE_URL": url, "GEMINI_API_KEY": "gem-test", "MASSGEN_GEMINI_CLI_BASE_URL": url}
	var stderr bytes.Buffer
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{Question: "Plan, then answer: what is 2+2?", Team: Team{Config: filepath.Join(work, "team.yaml")}, Overrides: Overrides{Timeout: 180}})
	if err != nil {
		t.Fatal(err)
	}
	return out, srv, work, stderr.String()
}

// Issues 20 and 21: a Claude Code agent with task planning and filesystem
// memory gets the planning tools over MCP (mcp__massgen_tools__…) and the
// kit's prompt sections in its system prompt; its plan is tasks/plan.json
// in its workspace, as an API agent's; and its cost is what Claude Code
// reported (total_cost_usd), its model having no price in massgen's
// catalogue, in status.json.
func TestCLIAgentPlansOverMCPAndReportsItsCost(t *testing.T) {
	out, srv, work, stderr := runClaude(t, `models:
  cc-plan:
    steps:
      - calls:
          - name: create_task_plan
            arguments: '{"tasks": [{"id": "research", "description": "Research", "verification": "3 sources"}, {"id": "write", "description": "Write", "depends_on": ["research"], "verification": "a page"}]}'
      - expect_results: [{name: create_task_plan, contains: '"success": true'}]
        calls: [{name: update_task_status, arguments: '{"task_id": "research", "status": "completed", "completion_notes": "found 3"}'}]
      - expect_results: [{name: update_task_status, contains: '"completion_notes": "found 3"'}]
        answer: "planned: 4"
`, `agents:
  - id: cc
    backend: {type: claude_code, model: cc-plan, cwd: ws}
orchestrator:
  coordination:
    enable_agent_task_planning: true
    task_planning_filesystem_mode: true
    enable_memory_filesystem_mode: true
`)
	if out.Status != "completed" || !strings.Contains(out.Final, "planned: 4") || len(out.Failures) > 0 {
		t.Fatalf("status %s, final %q, failures %v, err %v\n%s", out.Status, out.Final, out.Failures, out.Err, stderr)
	}
	if strings.Contains(stderr, "task planning") {
		t.Errorf("warnings: %s", stderr)
	}
	var first *llmsim.Record
	for _, r := range srv.Requests() {
		if r.Step == "calls" {
			first = &r
			break
		}
	}
	if first == nil || !slices.Contains(first.Tools, "mcp__massgen_tools__create_task_plan") || !slices.Contains(first.Tools, "mcp__massgen_tools__get_ready_tasks") {
		t.Fatalf("the planning tools were not offered over MCP: %+v", first)
	}
	var system string
	for _, m := range first.Messages {
		if m.Role == "system" {
			system += m.Content
		}
	}
	for _, want := range []string{"# Task Planning and Management", "## Memory System"} {
		if !strings.Contains(system, want) {
			t.Errorf("Claude Code's system prompt lacks %q", want)
		}
	}

	// The plan, as it stood when the agent answered: its snapshot's
	// tasks/plan.json.
	plans := planFiles(work)
	if !holdsPlan(t, plans) {
		t.Errorf("no tasks/plan.json on disk holds the plan: %q", plans)
	}

	// Claude Code's own price of the simulated usage is the agent's cost.
	if _, priced, _ := provider.LookupModel("cc-plan", func(string) string { return "" }); priced {
		t.Fatal("cc-plan has a price in the catalogue: the test cannot tell the reported cost from it")
	}
	var status struct {
		Agents map[string]struct {
			CostUSD     float64 `json:"cost_usd"`
			InputTokens int64   `json:"input_tokens"`
		} `json:"agents"`
		Results struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"results"`
	}
	data, err := os.ReadFile(filepath.Join(out.LogDir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	must(t, json.Unmarshal(data, &status))
	cc := status.Agents["cc"]
	if cc.CostUSD <= 0 || cc.InputTokens == 0 || status.Results.CostUSD < cc.CostUSD {
		t.Errorf("status.json: agent cost $%v over %d input tokens, run $%v; want Claude Code's reported cost", cc.CostUSD, cc.InputTokens, status.Results.CostUSD)
	}
	if out.TotalCost() != status.Results.CostUSD {
		t.Errorf("the outcome's cost $%v, status.json's $%v", out.TotalCost(), status.Results.CostUSD)
	}
	t.Logf("Claude Code's reported cost: $%.6f for %d input tokens", cc.CostUSD, cc.InputTokens)
}

// Issue 21 item 6 for a CLI agent: Claude Code spawns a subagent over MCP
// (having written CONTEXT.md with its own Write tool); the child, a
// massgen run of its own, answers, and its result comes back to the CLI.
func TestCLIAgentSpawnsASubagentOverMCP(t *testing.T) {
	out, srv, work, stderr := runClaude(t, `models:
  cc-lead:
    steps:
      - calls: [{name: Write, arguments: '{"file_path": "CONTEXT.md", "content": "Arithmetic for a test."}'}]
      - calls: [{name: spawn_subagents, arguments: '{"tasks": [{"task": "What is 2+2?", "subagent_id": "adder"}], "refine": false}'}]
      - expect_results: [{name: spawn_subagents, contains: '"status": "completed"'}]
        answer: "the subagent answered"
  child: {}
`, `agents:
  - id: cc
    backend: {type: claude_code, model: cc-lead, cwd: ws}
orchestrator:
  coordination:
    enable_subagents: true
    subagent_orchestrator: {enabled: true, agents: [{backend: {type: sim, model: child}}]}
`)
	if out.Status != "completed" || !strings.Contains(out.Final, "the subagent answered") || len(out.Failures) > 0 {
		t.Fatalf("status %s, final %q, failures %v, err %v\n%s", out.Status, out.Final, out.Failures, out.Err, stderr)
	}
	offered := false
	for _, r := range srv.Requests() {
		offered = offered || slices.Contains(r.Tools, "mcp__massgen_tools__spawn_subagents")
	}
	if !offered {
		t.Error("spawn_subagents was not offered over MCP")
	}
	// The child worked in its own workspace inside the parent's, and its
	// logs are under the run's.
	kids, _ := filepath.Glob(filepath.Join(work, ".massgen", "workspaces", "*", "cc", "subagents", "adder"))
	logs, _ := filepath.Glob(filepath.Join(out.LogDir, "subagents", "adder"))
	if len(kids) != 1 || len(logs) != 1 {
		t.Errorf("the child's workspace %q and logs %q", kids, logs)
	}
}

// Round timeouts reach a Claude Code agent mid-turn: the soft limit's
// wrap-up message in the result of its next massgen tool call; past the
// hard limit, a CLI busy in its own tool (a long shell command) is ended
// and started again with the message and the workflow tools only, and
// answers in time. (The commands go through sh -c: Claude Code refuses a
// standalone sleep.)
func TestCLIAgentGetsTheRoundTimeMessages(t *testing.T) {
	t.Run("soft", func(t *testing.T) {
		out, _, _, stderr := runClaude(t, `models:
  cc-soft:
    steps:
      - calls: [{name: Bash, arguments: '{"command": "sh -c \"sleep 4\""}'}]
      - calls: [{name: get_task_plan, arguments: '{}'}]
      - expect_results: [{name: get_task_plan, contains: "ROUND TIME LIMIT REACHED"}]
        answer: "wrapped up"
`, `agents:
  - id: cc
    backend: {type: claude_code, model: cc-soft, cwd: ws}
orchestrator:
  coordination: {enable_agent_task_planning: true}
timeout_settings: {initial_round_timeout_seconds: 3, round_timeout_grace_seconds: 120}
`)
		// The simulator answers only when the tool's result carried the
		// message (it fails the turn otherwise).
		if out.Status != "completed" || !strings.Contains(out.Final, "wrapped up") || len(out.Failures) > 0 {
			t.Fatalf("status %s, final %q, failures %v, err %v\n%s", out.Status, out.Final, out.Failures, out.Err, stderr)
		}
	})
	t.Run("hard", func(t *testing.T) {
		out, srv, _, stderr := runClaude(t, `models:
  cc-hard:
    steps:
      - calls: [{name: Bash, arguments: '{"command": "sh -c \"sleep 117\""}'}]
      - answer: "answered in time"
`, `agents:
  - id: cc
    backend: {type: claude_code, model: cc-hard, cwd: ws}
timeout_settings: {initial_round_timeout_seconds: 2, round_timeout_grace_seconds: 10}
`)
		if out.Status != "completed" || !strings.Contains(out.Final, "answered in time") || len(out.Failures) > 0 {
			t.Fatalf("status %s, final %q, failures %v, err %v\n%s", out.Status, out.Final, out.Failures, out.Err, stderr)
		}
		var restarted *llmsim.Record
		for _, r := range srv.Requests() {
			for _, m := range r.Messages {
				if m.Role == "user" && strings.Contains(m.Content, "HARD ROUND TIMEOUT") && strings.Contains(m.Content, "ROUND TIME LIMIT REACHED") {
					restarted = &r
				}
			}
			if restarted != nil {
				break
			}
		}
		if restarted == nil {
			t.Fatal("no request carried the wrap-up and hard-limit messages")
		}
		if restarted.Step != "answer" || slices.Contains(restarted.Tools, "Bash") || !slices.Contains(restarted.Tools, "mcp__massgen__new_answer") {
			t.Errorf("the restarted CLI's request: step %s, tools %v; want an answer with the workflow tools only", restarted.Step, restarted.Tools)
		}
		// The first CLI was ended with the command it ran.
		if left := cliProcesses("sleep 117"); len(left) > 0 {
			t.Errorf("processes left running: %v", left)
		}
	})
}

// planFiles are the tasks/plan.json files under work's .massgen (the
// workspaces and their snapshots).
func planFiles(work string) []string {
	var plans []string
	_ = filepath.WalkDir(filepath.Join(work, ".massgen"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, filepath.Join("tasks", "plan.json")) {
			plans = append(plans, p)
		}
		return nil
	})
	return plans
}

// holdsPlan reports whether one of plans holds the tests' plan: research
// completed, then write, which depends on it, under an anonymous owner.
func holdsPlan(t *testing.T, plans []string) bool {
	t.Helper()
	for _, p := range plans {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var pl tasks.Plan
		must(t, json.Unmarshal(data, &pl))
		var got []string // the agent's own tasks (memory adds upstream's memory tasks around them)
		for _, tk := range pl.Tasks {
			if tk.ID == "research" || tk.ID == "write" {
				got = append(got, tk.ID+":"+string(tk.Status)+":"+strings.Join(tk.Dependencies, ","))
			}
		}
		if slices.Equal(got, []string{"research:completed:", "write:pending:research"}) && strings.HasPrefix(pl.AgentID, "planning_") {
			return true
		}
	}
	return false
}

// The kit's tools reach Codex and Gemini CLI too, under their own MCP
// prefixes, with the same plan on disk.
func TestCodexAndGeminiCLIPlanOverMCP(t *testing.T) {
	for _, tc := range []struct{ typ, model string }{{"codex", "codex-plan"}, {"gemini_cli", "gemini-plan"}} {
		t.Run(tc.typ, func(t *testing.T) {
			out, srv, work, stderr := runCLIs(t, []string{tc.typ}, `models:
  `+tc.model+`:
    steps:
      - calls:
          - name: create_task_plan
            arguments: '{"tasks": [{"id": "research", "description": "Research", "verification": "3 sources"}, {"id": "write", "description": "Write", "depends_on": ["research"], "verification": "a page"}]}'
      - expect_results: [{name: create_task_plan, contains: '"success": true'}]
        calls: [{name: update_task_status, arguments: '{"task_id": "research", "status": "completed"}'}]
      - expect_results: [{name: update_task_status, contains: '"completed"'}]
        answer: "planned: 4"
`, `agents:
  - id: a
    backend: {type: `+tc.typ+`, model: `+tc.model+`, cwd: ws}
orchestrator:
  coordination: {enable_agent_task_planning: true, task_planning_filesystem_mode: true}
`)
			if out.Status != "completed" || !strings.Contains(out.Final, "planned: 4") || len(out.Failures) > 0 {
				t.Fatalf("status %s, final %q, failures %v, err %v\n%s", out.Status, out.Final, out.Failures, out.Err, stderr)
			}
			var offered []string
			for _, r := range srv.Requests() {
				for _, n := range r.Tools {
					if strings.HasSuffix(n, "create_task_plan") && !slices.Contains(offered, n) {
						offered = append(offered, n)
					}
				}
			}
			if len(offered) != 1 || offered[0] == "create_task_plan" {
				t.Errorf("create_task_plan offered as %q; want it under the CLI's MCP prefix", offered)
			}
			if plans := planFiles(work); !holdsPlan(t, plans) {
				t.Errorf("no tasks/plan.json on disk holds the plan: %q", plans)
			}
			t.Logf("%s calls it %s", tc.typ, offered)
		})
	}
}

// In a child run (a subagent's), the parent's runtime messages reach a CLI
// agent with the result of its next massgen tool call, as they reach an
// API agent: its CLI's tools deliver them.
func TestCLIAgentInAChildRunGetsTheParentsMessages(t *testing.T) {
	echo := tool.Func(llm.ToolDef{Name: "echo", Parameters: map[string]any{"type": "object"}},
		func(context.Context, json.RawMessage) (string, error) { return "echoed", nil })
	c := &cli.Agent{ID: "cc", Tools: []tool.Tool{echo}}
	in := subagent.NewInbox()
	cfg, err := config.Parse([]byte("agent: {id: cc, backend: {type: claude_code}}\n"), "c.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	agents, _, _, err := withSubagents(subagent.WithInbox(t.Context(), in), &Env{}, func(string) string { return "" }, cfg,
		[]orchestrator.Agent{{ID: "cc", Impl: c}}, &runWorkspaces{})
	if err != nil || len(agents) != 1 {
		t.Fatal(agents, err)
	}
	in.Post("look at the tests first", nil)
	res := c.Tools[0].Call(t.Context(), json.RawMessage(`{}`))
	if !strings.HasPrefix(res.Content, "echoed") || !strings.Contains(res.Content, "look at the tests first") {
		t.Errorf("the CLI's tool gave %q; want its result and the parent's message", res.Content)
	}
}
