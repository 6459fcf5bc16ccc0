package massgen_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The house's dependencies point one way (DESIGN.md §3): cli →
// {server, …} → app → orchestrator → {coord, agent, event, runlog, store} → {llm,
// tool}. Each rule below names a package and what it must never reach; a
// change that breaks one fails here rather than in a review.
func TestDependenciesPointOneWay(t *testing.T) {
	const mod = "github.com/massgen/massgen/"
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}    // every package it reaches
	imports := map[string][]string{} // what it imports directly
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p struct {
			ImportPath    string
			Imports, Deps []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		deps[p.ImportPath], imports[p.ImportPath] = p.Deps, p.Imports
	}
	never := func(pkg string, banned ...string) {
		t.Helper()
		if _, ok := deps[mod+pkg]; !ok {
			t.Fatalf("package %s not found: the rule would pass vacuously", pkg)
		}
		for _, d := range deps[mod+pkg] {
			for _, b := range banned {
				if d == mod+b || strings.HasPrefix(d, mod+b+"/") {
					t.Errorf("%s reaches %s", pkg, d)
				}
			}
		}
	}
	above := []string{"internal/cli", "internal/server", "internal/app"}
	never("internal/app", "internal/cli", "internal/server")
	never("internal/server", "internal/cli")
	never("internal/mcpserver", "internal/cli", "internal/server")
	// The TUI draws a run from its events alone: it reaches no part that
	// runs one, so it cannot slow or steer a run except by cancelling it.
	never("internal/tui", append(above, "internal/orchestrator", "internal/agent", "internal/llm", "internal/mcpserver")...)
	never("internal/app", "internal/tui")
	// The Web UI runs through app like any caller and is mounted by the
	// command line; the API server knows it only as an http.Handler.
	never("internal/webui", "internal/cli", "internal/server", "internal/tui", "internal/mcpserver")
	never("internal/server", "internal/webui")
	never("internal/app", "internal/webui")
	// massgen eval runs through app like any caller; the datasets it reads
	// are read by the simulator too (under app), so they reach no massgen package.
	never("internal/eval", "internal/cli", "internal/server", "internal/tui", "internal/webui", "internal/mcpserver")
	never("internal/eval/dataset", "internal")
	never("internal/orchestrator", append(above, "internal/config", "internal/runlog", "internal/provider")...)
	never("internal/agent", append(above, "internal/orchestrator", "internal/config")...)
	// An agent's workflow tools over MCP serve the agent vocabulary; they
	// know nothing of the orchestrator that drives the turn.
	never("internal/agent/workflowmcp", append(above, "internal/orchestrator", "internal/config", "internal/event")...)
	never("internal/runlog", append(above, "internal/orchestrator", "internal/llm")...)
	never("internal/tool", append(above, "internal/orchestrator", "internal/agent")...)
	never("internal/tool/files", append(above, "internal/orchestrator", "internal/agent", "internal/config")...)
	never("internal/tool/custom", append(above, "internal/orchestrator", "internal/agent", "internal/config")...)
	never("internal/tool/mcp", append(above, "internal/orchestrator", "internal/agent", "internal/config", "internal/tool/custom")...)
	never("internal/config", append(above, "internal/orchestrator", "internal/agent", "internal/tool")...)
	// Subagents run through the Runner the app gives them: the package
	// knows tools and usage, not what runs a child nor the config.
	never("internal/subagent", append(above, "internal/orchestrator", "internal/agent", "internal/config", "internal/workspace")...)
	// store keeps sessions; app translates a run's events into its calls.
	never("internal/store", append(above, "internal/orchestrator", "internal/runlog", "internal/config", "internal/llm", "internal/event")...)
	never("internal/llm", "internal/config", "internal/provider", "internal/coord", "internal/event", "internal/tool")
	// workspace (and its sandbox) is the enforcement point below every
	// tool: the standard library and x/sys only, no massgen package.
	never("internal/workspace", append(above, "internal/orchestrator", "internal/agent", "internal/config", "internal/tool", "internal/llm", "internal/coord", "internal/event")...)
	// write_mode's copies sit beside the Guard: they write the real paths
	// only through a Writer (the Guard) the app hands them.
	never("internal/workspace/isolate", append(above, "internal/orchestrator", "internal/agent", "internal/config", "internal/tool", "internal/llm", "internal/coord", "internal/event", "internal/workspace/sandbox")...)
	never("internal/kit/changedoc", "internal")
	// Task planning works on a plan and the Files seam (the Guard the app
	// hands it); plan modes on files and the plan's form: neither reaches
	// the orchestrator, the config or the app.
	never("internal/kit/tasks", append(above, "internal/orchestrator", "internal/agent", "internal/config", "internal/workspace")...)
	never("internal/kit/planmode", append(above, "internal/orchestrator", "internal/agent", "internal/config", "internal/workspace", "internal/tool")...)
	never("internal/workspace/sandbox", append(above, "internal/orchestrator", "internal/agent", "internal/config", "internal/tool", "internal/llm", "internal/coord", "internal/event")...)
	never("internal/workspace/sandbox/docker", append(above, "internal/orchestrator", "internal/agent", "internal/config", "internal/tool", "internal/llm", "internal/coord", "internal/event")...)
	// coord and event: the standard library only (scripts/test checks
	// their whole closure); an adapter: llm and its own SDK, nothing else.
	for _, adapter := range []string{"chatcompat", "openai", "anthropic", "gemini"} {
		pkg := mod + "internal/llm/" + adapter
		for _, imp := range imports[pkg] {
			if strings.HasPrefix(imp, mod) && imp != mod+"internal/llm" {
				t.Errorf("adapter %s imports %s: an adapter imports llm and its own SDK only", adapter, imp)
			}
		}
	}
}
