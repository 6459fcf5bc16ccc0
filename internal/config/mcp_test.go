package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMCPServersListAndMapForms(t *testing.T) {
	src := `agents:
  - id: a
    backend:
      type: openai
      model: gpt-4o
      allowed_tools: [mcp__weather__forecast, search]
      mcp_servers:
        - name: weather
          type: stdio
          command: npx
          args: ["-y", "@fak111/weather-mcp"]
          env: {API_KEY: "${WEATHER_KEY}", RETRIES: 3}
          cwd: tools
          timeout: 30
        - name: remote
          url: "http://127.0.0.1:9000/mcp"
          headers: {Authorization: "Bearer ${TOKEN:-none}"}
          exclude_tools: [delete]
  - id: b
    backend:
      type: openai
      model: gpt-4o
      mcp_servers:
        brave_search:
          command: [npx, -y, "@modelcontextprotocol/server-brave-search"]
        legacy:
          type: sse
          url: http://127.0.0.1:9001/sse
`
	cfg := parseOK(t, src, map[string]string{"WEATHER_KEY": "k1"})
	want := []MCPServer{
		{Name: "weather", Type: "stdio", Command: "npx", Args: []string{"-y", "@fak111/weather-mcp"},
			Env: map[string]string{"API_KEY": "k1", "RETRIES": "3"}, Cwd: "tools", TimeoutSeconds: 30, Line: 8},
		{Name: "remote", Type: "streamable-http", URL: "http://127.0.0.1:9000/mcp",
			Headers: map[string]string{"Authorization": "Bearer none"}, ExcludeTools: []string{"delete"}, Line: 15},
	}
	if diff := cmp.Diff(want, cfg.Agents[0].Backend.MCPServers); diff != "" {
		t.Errorf("list form (-want +got):\n%s", diff)
	}
	if got := cfg.Agents[0].Backend.AllowedTools; !slices.Equal(got, []string{"mcp__weather__forecast", "search"}) {
		t.Errorf("allowed_tools = %v", got)
	}
	want = []MCPServer{
		{Name: "brave_search", Type: "stdio", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-brave-search"}, Line: 25},
		{Name: "legacy", Type: "sse", URL: "http://127.0.0.1:9001/sse", Line: 27},
	}
	if diff := cmp.Diff(want, cfg.Agents[1].Backend.MCPServers); diff != "" {
		t.Errorf("map form (-want +got):\n%s", diff)
	}
	for _, w := range cfg.Warnings {
		if strings.Contains(w.Message, "accepted but ignored") {
			t.Errorf("an MCP key is still called ignored: %s", w)
		}
	}
	if got := cfg.IgnoredFeatures(); len(got) != 0 {
		t.Errorf("IgnoredFeatures = %v, want none", got)
	}
}

func TestMCPUnsetVariableWarnsAtLoadAndIsKeptForStart(t *testing.T) {
	src := `agent:
  backend:
    type: openai
    model: gpt-4o
    mcp_servers:
      brave:
        command: npx
        env: {BRAVE_API_KEY: "${BRAVE_API_KEY}"}
`
	cfg := parseOK(t, src, nil)
	if got := cfg.Agents[0].Backend.MCPServers[0].UnsetVars; !slices.Equal(got, []string{"BRAVE_API_KEY"}) {
		t.Errorf("UnsetVars = %v", got)
	}
	d, ok := find(cfg.Warnings, "agent.backend.mcp_servers.brave.env.BRAVE_API_KEY", Warning)
	if !ok || !strings.Contains(d.Message, "BRAVE_API_KEY is not set") || d.Line != 8 {
		t.Errorf("warning = %+v, want one at line 8 naming BRAVE_API_KEY\n%s", d, dump(cfg.Warnings))
	}
}

func TestMCPServerMistakesPointAtTheLine(t *testing.T) {
	head := "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      mcp_servers:\n"
	tests := []struct {
		name, body, key string
		sev             Severity
		line            int
		msg             string
	}{
		{"a list entry without a name", "        - command: npx\n", "agents[0].backend.mcp_servers[0].name", Error, 7, "needs 'name'"},
		{"stdio without a command", "        s: {type: stdio}\n", "agents[0].backend.mcp_servers.s.command", Error, 7, "needs 'command'"},
		{"http without a url", "        s: {type: streamable-http}\n", "agents[0].backend.mcp_servers.s.url", Error, 7, "needs 'url'"},
		{"an unknown type", "        s: {type: websocket, url: x}\n", "agents[0].backend.mcp_servers.s.type", Error, 7, "invalid MCP server type 'websocket'"},
		{"'__' in a name", "        a__b: {command: x}\n", "agents[0].backend.mcp_servers.a__b.name", Error, 7, "contains '__'"},
		{"a repeated name", "        - {name: s, command: x}\n        - {name: s, command: y}\n", "agents[0].backend.mcp_servers[1].name", Error, 8, "two MCP servers are named 's'"},
		{"args not a list", "        s: {command: x, args: -y}\n", "agents[0].backend.mcp_servers.s.args", Error, 7, "must be a list of strings"},
		{"a typo", "        s: {command: x, agrs: [a]}\n", "agents[0].backend.mcp_servers.s.agrs", Warning, 7, "unknown key 'agrs'"},
		{"not a list or map", "        npx\n", "agents[0].backend.mcp_servers", Error, 7, "a list of servers or a map of name to server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := diagnose(t, head+tt.body, nil)
			d, ok := find(ds, tt.key, tt.sev)
			if !ok || d.Line != tt.line || !strings.Contains(d.Message, tt.msg) {
				t.Errorf("want %v at %s line %d containing %q; got:%s", tt.sev, tt.key, tt.line, tt.msg, dump(ds))
			}
		})
	}
}

// Upstream's examples that use mcp_servers decode into servers, not just
// load: each names a command or a url.
func TestReferenceMCPConfigsDecodeTheirServers(t *testing.T) {
	if _, err := os.Stat(referenceConfigs); err != nil {
		t.Skipf("reference configs not found: %v", err)
	}
	n := 0
	_ = filepath.WalkDir(referenceConfigs, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || filepath.Ext(path) != ".yaml" {
			return nil
		}
		data, _ := os.ReadFile(path)
		if !regexp.MustCompile(`(?m)^\s*mcp_servers:`).Match(data) { // not in a comment
			return nil
		}
		cfg, err := Load(path, envOf(nil))
		if err != nil {
			return nil // claude_code and ag2 configs: TestReferenceCorpora covers them
		}
		found := 0
		for _, a := range cfg.Agents {
			for _, s := range a.Backend.MCPServers {
				found++
				if s.Command == "" && s.URL == "" {
					t.Errorf("%s: server %s has neither command nor url", path, s.Name)
				}
			}
		}
		if found == 0 && !strings.Contains(string(data), "mcp_servers: []") {
			t.Errorf("%s: mentions mcp_servers but no server decoded", path)
		}
		n++
		return nil
	})
	if n < 10 {
		t.Errorf("only %d reference configs with mcp_servers loaded", n)
	}
}
