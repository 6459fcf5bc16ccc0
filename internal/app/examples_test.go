package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/examples"
	"github.com/massgen/massgen/internal/config"
)

// Every shipped example — massgen's own and those under MassGen's paths
// (basic/multi/three_agents_default, tools/mcp/…) — is valid with no
// warning at all, and runs on the simulator as written: every provider
// pointed at it (MASSGEN_<TYPE>_BASE_URL), its MCP servers started as a
// user's npx would start them, every tool its agents are offered called
// once, and a final answer reached with nothing the config asks left out.
func TestEveryExampleRunsOnTheSimulator(t *testing.T) {
	names := examples.Names()
	if len(names) < 30 {
		t.Fatalf("%d examples, want the library under MassGen's paths too", len(names))
	}
	path := "/usr/bin:/bin"
	if node, err := exec.LookPath("node"); err == nil {
		path = filepath.Dir(node) + ":" + path
	}
	shim := npxShim(t)
	if shim == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must have the MCP test servers (tests/mcp-npm)")
		}
		t.Log("the MCP test servers are not installed (npm ci in tests/mcp-npm): the MCP examples run without their servers")
	} else {
		path = shim + ":" + path
	}
	_, err := exec.LookPath("bwrap")
	noBwrap := err != nil && os.Getenv("CI") != "true" // CI installs it
	t.Setenv("PATH", path)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			_, data, ok := examples.Find(n)
			if !ok {
				t.Fatalf("Find(%q) finds nothing", n)
			}
			cfg, err := config.Parse(data, "@examples/"+n+".yaml", func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) > 0 {
				t.Errorf("warnings: %v", cfg.Warnings)
			}
			res := runOnSimulator(t, "@examples/"+n, nil, nil)
			if res.err != nil {
				t.Fatalf("did not start: %v", res.err)
			}
			if res.out.Status != "completed" || res.out.Final == "" {
				t.Fatalf("status %s, final %q, err %v", res.out.Status, res.out.Final, res.out.Err)
			}
			// An agent with a workspace runs its MCP servers in the
			// sandbox, where this test's npx stand-in (under the private
			// /tmp) is not found: they are left out, and the run says so.
			sandboxedMCP := slices.ContainsFunc(cfg.Agents, func(a config.Agent) bool { return a.Backend.Cwd != "" && len(a.Backend.MCPServers) > 0 })
			leftOut := slices.DeleteFunc(slices.Clone(res.out.IgnoredFeatures), func(f string) bool {
				return sandboxedMCP && strings.HasPrefix(f, "mcp_servers.") ||
					noBwrap && strings.HasPrefix(f, "command_line_execution_mode: ") // commands need bubblewrap
			})
			if len(leftOut) > 0 {
				t.Errorf("the run left out %q", leftOut)
			}
			if u := res.uncalled(); len(u) > 0 {
				t.Errorf("offered but never called: %q (offered %v)", u, res.offered)
			}
			if strings.Contains(string(data), "mcp_servers") && shim != "" && !sandboxedMCP && !calledMCP(res) {
				t.Errorf("no MCP tool was offered or called: %v", res.offered)
			}
			t.Logf("tools offered and called: %v", res.offered)
		})
	}
}

func calledMCP(res simOutcome) bool {
	for tl := range res.called {
		if strings.HasPrefix(tl, "mcp__") {
			return true
		}
	}
	return false
}
