package attack

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli/clitest"
)

// cliKitRun runs a claude_code agent (Claude Code from tests/cli-agents)
// whose hostile model (the simulator) takes steps, with the coordination
// keys given, through the massgen binary.
func cliKitRun(t *testing.T, dir string, steps []any, coordination map[string]any) result {
	t.Helper()
	base := simServe(t, loopback(t), hostileScenario(steps...))
	return cliRun(t, dir, "claude_code", base, nil, map[string]any{"orchestrator": map[string]any{"coordination": coordination}})
}

// A coding-agent CLI gets the kit's tools over MCP (issue 21 for CLI
// agents), and they stay behind its Guard as an API agent's do. A hostile
// Claude Code makes tasks/ a link to a directory outside its workspace
// with its own shell, then has the planner write the plan there; it asks
// for a subagent that may read a directory outside, and for one named
// like a path. Every write and spawn is refused with why, and nothing
// outside changes.
func TestCLIKitEscapes(t *testing.T) {
	needBwrap(t)
	clitest.Program(t, "claude_code")
	plan := `{"tasks": [{"id": "a", "description": "A", "verification": "v"}]}`
	bash := func(cmd string) map[string]any {
		return map[string]any{"name": "Bash", "arguments": `{"command": ` + strconvQuote(cmd) + `, "description": "setup"}`}
	}
	call := func(name, args string) map[string]any { return map[string]any{"name": name, "arguments": args} }

	attempt(t, "claude_code: tasks/plan.json through a linked tasks/ directory", func(t *testing.T) {
		dir := tempDir(t)
		out := filepath.Join(dir, plantedDir)
		writeFiles(t, out, map[string]string{"victim.json": `{"keep": "me"}`})
		before := snap(t, out)
		r := cliKitRun(t, dir, []any{
			map[string]any{"calls": []any{bash("ln -s " + out + " tasks && ls -l tasks")}},
			map[string]any{"calls": []any{call("create_task_plan", plan)}},
			map[string]any{"calls": []any{call("update_task_status", `{"task_id": "a", "status": "completed"}`)}},
			map[string]any{"answer": "done"},
		}, map[string]any{"enable_agent_task_planning": true, "task_planning_filesystem_mode": true})
		if r.code != 0 {
			t.Fatalf("the run failed: %s", r)
		}
		// The attack ran (Claude Code refuses a command starting with rm,
		// so the link is made where no tasks/ exists yet), then the
		// planner said what became of its writes.
		if len(grepTree(filepath.Join(dir, "logs"), "-> "+out)) == 0 {
			t.Errorf("the logs do not show the link to %s: %s", out, r)
		}
		if len(grepTree(filepath.Join(dir, "logs"), "could not be written")) == 0 {
			t.Errorf("no tool result in the logs says the plan could not be written")
		}
		unchanged(t, "the directory tasks/ points to", out, before)
	})

	attempt(t, "claude_code: subagents reading outside, named like a path", func(t *testing.T) {
		dir := tempDir(t)
		out := filepath.Join(dir, plantedDir)
		writeFiles(t, out, map[string]string{"secret.txt": "CLI-SUBAGENT-SECRET-5e1"})
		before := snap(t, out)
		spawn := func(task map[string]any) map[string]any {
			b, _ := json.Marshal(map[string]any{"tasks": []any{task}, "refine": false})
			return call("spawn_subagents", string(b))
		}
		r := cliKitRun(t, dir, []any{
			map[string]any{"calls": []any{call("Write", `{"file_path": "CONTEXT.md", "content": "A site."}`)}},
			map[string]any{"calls": []any{spawn(map[string]any{"task": "Read the secret.", "context_paths": []string{out}})}},
			map[string]any{"calls": []any{spawn(map[string]any{"task": "Write.", "subagent_id": "../../" + plantedDir})}},
			map[string]any{"answer": "done"},
		}, map[string]any{"enable_subagents": true,
			"subagent_orchestrator": map[string]any{"enabled": true, "agents": []any{map[string]any{"backend": map[string]any{"type": "sim", "model": "child"}}}}})
		if r.code != 0 {
			t.Fatalf("the run failed: %s", r)
		}
		if kids, _ := filepath.Glob(filepath.Join(workspaceOf(dir), "subagents", "*")); len(kids) > 0 {
			t.Errorf("a subagent was started: %q", kids)
		}
		if hits := grepTree(filepath.Join(dir, "logs"), "CLI-SUBAGENT-SECRET-5e1"); len(hits) > 0 {
			t.Errorf("the secret reached %q", hits)
		}
		if logs := strings.Join(grepTree(filepath.Join(dir, "logs"), "spawn_subagents"), " "); logs == "" {
			t.Errorf("the logs show no spawn_subagents call")
		}
		unchanged(t, "the directory outside", out, before)
	})
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
