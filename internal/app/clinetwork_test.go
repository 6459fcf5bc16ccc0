package app

import (
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/claudecode"
	"github.com/massgen/massgen/internal/agent/cli/copilot"
	"github.com/massgen/massgen/internal/workspace"
)

// A CLI agent's network is limited unless its backend consents to the
// host's (command_line_allow_network: true), which the run warns about;
// a limited CLI with stdio MCP servers is told they run without a
// network, naming the key that gives it one.
func TestCLINetworkConsent(t *testing.T) {
	g, err := workspace.New(workspace.Policy{Agent: "cc", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mcp := []cli.MCPServer{{Name: "fetcher", Command: "npx", Args: []string{"some-server"}}, {Name: "remote", URL: "https://mcp.example.com"}}
	for _, tc := range []struct {
		name    string
		m       cliMember
		network bool   // a.Network set, a.Wrap not
		warning string // "" = none
	}{
		{"limited", cliMember{vendor: claudecode.Vendor{}}, true, ""},
		{"limited with MCP servers", cliMember{vendor: claudecode.Vendor{}, mcp: mcp}, true,
			"agent cc: its claude_code CLI's network is limited to its provider and massgen's servers, so its MCP servers run without one (fetcher): " +
				"npx or uvx cannot fetch them and they cannot reach their own services; command_line_allow_network: true on its backend gives the CLI the host's network"},
		{"endpoint unknown", cliMember{vendor: copilot.Vendor{}}, true,
			"agent cc: its copilot CLI's network is limited to its provider, whose endpoint massgen knows only from base_url"},
		{"endpoint named", cliMember{vendor: copilot.Vendor{}, baseURL: "https://models.example.com/v1"}, true, ""},
		{"consented", cliMember{vendor: claudecode.Vendor{}, mcp: mcp, network: true}, false,
			"agent cc: its claude_code CLI keeps the host's network (command_line_allow_network: true)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &cli.Agent{ID: "cc", Home: t.TempDir()}
			warnings := sandboxCLI(a, &tc.m, "/usr/bin/bwrap", g)
			if (a.Network != nil) != tc.network || (a.Wrap != nil) == tc.network {
				t.Errorf("Network set %v, Wrap set %v", a.Network != nil, a.Wrap != nil)
			}
			switch {
			case tc.warning == "" && len(warnings) > 0:
				t.Errorf("warnings %q", warnings)
			case tc.warning != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], tc.warning)):
				t.Errorf("warnings %q, want %q", warnings, tc.warning)
			}
		})
	}
}
