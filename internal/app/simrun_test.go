package app

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/provider"
)

// simGateway is one simulator serving every provider: the environment
// that points each backend type at it (MASSGEN_<TYPE>_BASE_URL, the
// user-facing override for local gateways) with a placeholder for each
// key variable, so a config written for real providers runs unchanged.
func simGateway(t *testing.T, srv *llmsim.Server) map[string]string {
	t.Helper()
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	vars := map[string]string{}
	for _, typ := range provider.Names() {
		spec, _ := provider.Lookup(typ)
		base := url
		if spec.Wire == provider.WireGemini {
			base = strings.TrimSuffix(url, "/v1") // the Gemini SDK adds its own /v1beta
		}
		vars["MASSGEN_"+strings.ToUpper(typ)+"_BASE_URL"] = base
		for _, k := range spec.KeyEnv {
			vars[k] = "sk-simulated"
		}
	}
	vars["AZURE_OPENAI_ENDPOINT"] = url
	return vars
}

// workflowTool reports whether a tool name is one of the workflow tools
// (under a client's prefix too): the simulator calls those itself.
func workflowTool(name string) bool {
	for _, w := range []string{"new_answer", "vote", "submit", "restart_orchestration", "stop", "submit_checklist"} {
		if name == w || strings.HasSuffix(name, "__"+w) || strings.HasSuffix(name, "_"+w) {
			return true
		}
	}
	return false
}

// probeArguments are arguments that make sense for the workspace tools;
// any other tool gets {} (its error result, if it wants more, is still a
// result that goes back to the model).
var probeArguments = map[string]string{
	"write_file":       `{"path": "probe.txt", "content": "massgen probe"}`,
	"read_file":        `{"path": "probe.txt"}`,
	"list_directory":   `{"path": "."}`,
	"create_directory": `{"path": "probe_dir"}`,
	"delete_file":      `{"path": "no_such_file.txt"}`,
	"glob":             `{"pattern": "*"}`,
	"grep":             `{"pattern": "massgen"}`,
	"execute_command":  `{"command": "echo massgen"}`,
	"edit_file":        `{"path": "probe.txt", "old_string": "probe", "new_string": "probed"}`,
	// server-everything's: its default is 10 s
	"mcp__everything__trigger-long-running-operation": `{"duration": 1, "steps": 1}`,
}

// simOutcome is how a config fared on the simulator: the run, or why it
// did not start; the tools its agents were offered (by model) and which
// of them were called.
type simOutcome struct {
	out     *Outcome
	err     error
	offered map[string][]string // model → tools other than the workflow tools, offered to every agent on it
	partly  map[string][]string // model → tools offered to some of its agents only (not called)
	called  map[string]bool
}

// uncalled lists the offered tools no agent called.
func (s simOutcome) uncalled() []string {
	var out []string
	for _, tools := range s.offered {
		for _, tl := range tools {
			if !s.called[tl] && !slices.Contains(out, tl) {
				out = append(out, tl)
			}
		}
	}
	slices.Sort(out)
	return out
}

// runOnSimulator runs config (a file or @examples/NAME) unchanged against
// the simulator twice: once under the default policy, which shows the
// tools each model is offered, then with every model calling each of
// those tools once (in one response, at its first coordination request)
// before it answers and votes as usual. The second run is the outcome;
// each tool call's result goes back to the model through the real tool
// loop, whatever the tool answers.
func runOnSimulator(t *testing.T, config string, env map[string]string, prepare func(workDir string)) simOutcome {
	t.Helper()
	run := func(sc *llmsim.Scenario) (*Outcome, error, *llmsim.Server, map[string]bool) {
		srv := llmsim.New(sc)
		srv.DropMessages()
		vars := simGateway(t, srv)
		for k, v := range env {
			vars[k] = v
		}
		work := t.TempDir()
		if prepare != nil {
			prepare(work)
		}
		var mu sync.Mutex
		called := map[string]bool{}
		observe := func(sub *event.Subscription, _ RunInfo) {
			for {
				e, ok := sub.Next(nil)
				if !ok {
					return
				}
				if tc, ok := e.(event.ToolCalled); ok {
					mu.Lock()
					called[tc.Tool] = true
					mu.Unlock()
				}
			}
		}
		e := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: discard{}, WorkDir: work}
		out, err := Execute(t.Context(), e, Request{Question: "What is 2+2?", Team: Team{Config: config}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}, Observer: Observer{Observe: observe}})
		mu.Lock()
		defer mu.Unlock()
		return out, err, srv, maps.Clone(called)
	}
	out, err, srv, _ := run(nil)
	if err != nil {
		return simOutcome{err: err}
	}
	// A model's steps are the simulator's, whichever agent asks: when
	// agents share a model but not their tools, a scripted call would
	// reach an agent without the tool. So each model calls the tools
	// offered in every one of its coordination requests; the others are
	// reported apart (partly).
	offered, partly := map[string][]string{}, map[string][]string{}
	seen := map[string]bool{}
	for _, r := range srv.Requests() {
		if !slices.ContainsFunc(r.Tools, func(tl string) bool { return tl == "new_answer" || strings.HasSuffix(tl, "new_answer") }) {
			continue // a presentation or a post-evaluation: not every agent's
		}
		var tools []string
		for _, tl := range r.Tools {
			if !workflowTool(tl) {
				tools = append(tools, tl)
			}
		}
		if !seen[r.Model] {
			seen[r.Model], offered[r.Model] = true, tools
			continue
		}
		for _, tl := range tools {
			if !slices.Contains(offered[r.Model], tl) && !slices.Contains(partly[r.Model], tl) {
				partly[r.Model] = append(partly[r.Model], tl)
			}
		}
		for _, tl := range offered[r.Model] {
			if !slices.Contains(tools, tl) {
				partly[r.Model] = append(partly[r.Model], tl)
			}
		}
		offered[r.Model] = slices.DeleteFunc(offered[r.Model], func(tl string) bool { return !slices.Contains(tools, tl) })
	}
	for m, tools := range offered {
		if len(tools) == 0 {
			delete(offered, m)
		}
	}
	if len(offered) == 0 {
		return simOutcome{out: out, offered: offered, partly: partly, called: map[string]bool{}}
	}
	sc := &llmsim.Scenario{Models: map[string]llmsim.ModelScript{}}
	for model, tools := range offered {
		var calls []llmsim.Call
		for _, tl := range tools {
			args := probeArguments[tl]
			if args == "" {
				args = "{}"
			}
			calls = append(calls, llmsim.Call{Name: tl, Arguments: args})
		}
		sc.Models[model] = llmsim.ModelScript{Steps: []llmsim.Step{{When: llmsim.WhenCoordination, Calls: calls}}}
	}
	out, err, _, called := run(sc)
	return simOutcome{out: out, err: err, offered: offered, partly: partly, called: called}
}

// npxShim is a directory with an `npx` that starts the MCP servers
// tests/mcp-npm installed (server-everything, server-filesystem) for
// `npx -y @modelcontextprotocol/server-…`, so configs that start them as
// users do run offline; any other package fails to start, as it would
// without a network. "" when those servers are not installed.
func npxShim(t *testing.T) string {
	t.Helper()
	bin, _ := filepath.Abs(filepath.Join("..", "..", "tests", "mcp-npm", "node_modules", ".bin"))
	if d := os.Getenv("MASSGEN_MCP_NPM_BIN"); d != "" {
		bin = d
	}
	if _, err := os.Stat(filepath.Join(bin, "mcp-server-everything")); err != nil {
		return ""
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return ""
	}
	// node by its path: the shim works with nothing else on PATH.
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
[ "$1" = "-y" ] && shift
pkg=$1; shift
case "$pkg" in
@modelcontextprotocol/server-everything) exec %[2]q %[1]q/mcp-server-everything "$@" ;;
@modelcontextprotocol/server-filesystem) exec %[2]q %[1]q/mcp-server-filesystem "$@" ;;
esac
echo "npx (test): $pkg is not installed here" >&2
exit 1
`, bin, node)
	must(t, os.WriteFile(filepath.Join(dir, "npx"), []byte(script), 0o755))
	for _, fetcher := range []string{"uvx", "uv"} { // never the registries
		must(t, os.WriteFile(filepath.Join(dir, fetcher), []byte("#!/bin/sh\necho \"no package registry in tests\" >&2\nexit 1\n"), 0o755))
	}
	return dir
}
