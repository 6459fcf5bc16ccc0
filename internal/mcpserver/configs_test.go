package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/mcpserver"
)

// secret is in every file a caller must not read: no error may quote it.
const secret = "SECRET-CONTENT-7f3a"

// markerTeam is a config whose MCP server is a command creating marker:
// loading it is running a command of the caller's choice.
func markerTeam(marker string) string {
	return fmt.Sprintf("# %s\nagent:\n  id: a\n  backend:\n    type: sim\n    mcp_servers:\n"+
		"      - {name: m, command: sh, args: [\"-c\", \"touch %s\"]}\n", secret, marker)
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// environHead is the start of this process's /proc/self/environ, which no
// error may quote.
func environHead(t *testing.T) []string {
	data, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return nil
	}
	var out []string
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		if len(kv) >= 8 {
			out = append(out, string(kv))
		}
		if len(out) == 5 {
			break
		}
	}
	return out
}

// A call may not name a config beyond the examples, the config directory
// and YAML text: such a path is refused without being opened (the MCP
// server of the marker config never starts), and the refusal quotes
// nothing of the file.
func TestARunRefusesConfigsBeyondTheAllowedOnes(t *testing.T) {
	outside, dir := t.TempDir(), t.TempDir()
	marker := filepath.Join(outside, "marker")
	evil := filepath.Join(outside, "evil.yaml")
	write(t, outside, "evil.yaml", markerTeam(marker))
	for name, target := range map[string]string{"escape.yaml": evil, "environ.yaml": "/proc/self/environ"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../"+filepath.Base(outside)+"/evil.yaml", filepath.Join(dir, "relative.yaml")); err != nil {
		t.Fatal(err)
	}
	env := environHead(t)
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := connect(t, tr.connect(t, newServer(t, mcpserver.Options{NoLogs: true, ConfigDir: dir})))
			for _, tt := range []struct{ config, says string }{
				{"/proc/self/environ", "is refused"},
				{"../../etc/passwd", "is refused"},
				{"/etc/passwd", "is refused"},
				{evil, "is refused"},
				{"@examples/../../" + evil, "no example config matches"},
				{"escape.yaml", "leads outside the directory"},
				{"escape", "leads outside the directory"},
				{"relative.yaml", "leads outside the directory"},
				{"environ.yaml", "leads outside the directory"},
				{filepath.Join(dir, "escape.yaml"), "leads outside the directory"},
				{markerTeam(marker), "mcp_servers"}, // the same config, inline
				{"agent: {id: a, backend: {type: sim, system_message: \"${HOME}\"}}\n", "reads environment variables (HOME)"},
				{"agents: ${HOME}\n", "reads environment variables (HOME)"},
			} {
				res, _ := call(ctx30(t), t, c, map[string]any{"question": "q", "config": tt.config})
				got := text(res)
				if !res.IsError || !strings.Contains(got, tt.says) {
					t.Errorf("config %q: error %v, %q; want it to say %q", tt.config, res.IsError, got, tt.says)
				}
				if !strings.Contains(tt.config, "\n") && strings.Contains(got, secret) {
					t.Errorf("config %q: the error quotes the file: %q", tt.config, got)
				}
				for _, kv := range env {
					if strings.Contains(got, kv) {
						t.Errorf("config %q: the error quotes the environment (%q): %q", tt.config, kv, got)
					}
				}
				if home := os.Getenv("HOME"); home != "" && strings.Contains(got, "HOME="+home) {
					t.Errorf("config %q: the error quotes HOME: %q", tt.config, got)
				}
			}
			time.Sleep(50 * time.Millisecond) // a command started would have run by now
			if exists(marker) {
				t.Fatal("the refused config's MCP server command ran")
			}
		})
	}
}

// An inline config may be a team of models; anything that reaches the
// machine refuses it, naming what.
func TestAnInlineConfigIsATeamOfModelsOnly(t *testing.T) {
	c := connect(t, transports[0].connect(t, newServer(t, mcpserver.Options{NoLogs: true})))
	res, out := call(ctx30(t), t, c, map[string]any{"question": "What is the capital of France?",
		"config": "agents:\n  - {id: x, backend: {type: sim}}\n  - {id: y, backend: {type: sim, temperature: 0.2}}\n" +
			"orchestrator: {voting_sensitivity: strict}\n"})
	if res.IsError || (out.Winner != "x" && out.Winner != "y") {
		t.Fatalf("an inline team of models: %s (winner %q)", text(res), out.Winner)
	}
	res, out = call(ctx30(t), t, c, map[string]any{"question": "q", "config": "{agent: {id: solo, backend: {type: sim}}}"})
	if res.IsError || out.Winner != "solo" {
		t.Fatalf("an inline flow mapping: %s", text(res))
	}
	// A provider's own tools are the provider's: accepted (the run then
	// fails on the missing key, not on the rule).
	res, _ = call(ctx30(t), t, c, map[string]any{"question": "q", "config": "agent: {id: a, backend: {type: openai, model: gpt-4o-mini, enable_web_search: true}}\n"})
	if strings.Contains(text(res), "refused") {
		t.Errorf("enable_web_search on openai: %q", text(res))
	}
	for _, tt := range []struct{ backend, says string }{
		{"enable_web_search: true", "agents[0].backend.enable_web_search"}, // not sim's own
		{"custom_tools: [{type: command, name: t, command: [sh, -c, 'touch x']}]", "agents[0].backend.custom_tools"},
		{"enable_mcp_command_line: true", "agents[0].backend.enable_mcp_command_line"},
		{"cwd: ws", "agents[0].backend.cwd"},
		{"context_paths: [{path: /etc, permission: read}]", "agents[0].backend.context_paths"},
		{"base_url: http://attacker.example/v1", "agents[0].backend.base_url"},
		{"api_key: k", "agents[0].backend.api_key"},
		{"scenario: /etc/passwd", "agents[0].backend.scenario"},
		{"mcp_servers: [{name: h, url: http://attacker.example/mcp}]", "agents[0].backend.mcp_servers"},
	} {
		cfg := "agents:\n  - id: a\n    backend:\n      type: sim\n      " + tt.backend + "\n"
		res, _ := call(ctx30(t), t, c, map[string]any{"question": "q", "config": cfg})
		if !res.IsError || !strings.Contains(text(res), tt.says) || !strings.Contains(text(res), mcpserver.AllowConfigPathsFlag) {
			t.Errorf("%s: error %v, %q; want it to name %s and the flag", tt.backend, res.IsError, text(res), tt.says)
		}
	}
	res, _ = call(ctx30(t), t, c, map[string]any{"question": "q",
		"config": "agent: {id: a, backend: {type: sim}}\norchestrator: {snapshot_storage: /tmp/x}\nhooks: {a: 1}\n"})
	if !res.IsError || !strings.Contains(text(res), "orchestrator.snapshot_storage") || !strings.Contains(text(res), "hooks") {
		t.Errorf("orchestrator paths and top-level extras: %q", text(res))
	}
}

// --allow-config-paths lifts the rule: the same marker config runs its
// command (so the refusal above is what kept it from running), and a
// file's config errors are reduced to their positions.
func TestAllowConfigPathsLiftsTheRuleButErrorsStillQuoteNothing(t *testing.T) {
	outside := t.TempDir()
	marker := filepath.Join(outside, "marker")
	write(t, outside, "evil.yaml", markerTeam(marker))
	write(t, outside, "bad.yaml", "# "+secret+"\n"+secret+"\n")
	write(t, outside, "typo.yaml", "agent: {id: a, backend: {type: opena, model: "+secret+"}}\n")
	c := connect(t, transports[0].connect(t, newServer(t, mcpserver.Options{NoLogs: true, AllowConfigPaths: true})))
	_, _ = call(ctx30(t), t, c, map[string]any{"question": "q", "config": filepath.Join(outside, "evil.yaml"), "timeout_seconds": 5})
	if !exists(marker) {
		t.Error("with --allow-config-paths, the config's MCP server did not start: the refusal test proves nothing")
	}
	for _, p := range []string{filepath.Join(outside, "bad.yaml"), filepath.Join(outside, "typo.yaml"), "/proc/self/environ"} {
		res, _ := call(ctx30(t), t, c, map[string]any{"question": "q", "config": p})
		got := text(res)
		if !res.IsError || !strings.Contains(got, "invalid config "+p) || !strings.Contains(got, "not sent to MCP clients") {
			t.Errorf("%s: error %v, %q", p, res.IsError, got)
		}
		if strings.Contains(got, secret) || strings.Contains(got, "opena") {
			t.Errorf("%s: the error quotes the file: %q", p, got)
		}
		for _, kv := range environHead(t) {
			if strings.Contains(got, kv) {
				t.Errorf("%s: the error quotes the environment: %q", p, got)
			}
		}
	}
}

// Over HTTP, a request without the key, or with another one, gets 401
// with WWW-Authenticate and reaches no session: a tools/call on a live
// session's id, without the key, starts no run.
func TestHTTPNeedsTheKey(t *testing.T) {
	sim, base := simtest.Start(t, "models:\n  \"*\":\n    always: {answer: hi}\n")
	dir := t.TempDir()
	write(t, dir, "team.yaml", team(base, "m-a"))
	hs := httptest.NewServer(newServer(t, mcpserver.Options{NoLogs: true, ConfigDir: dir}).Handler(mcpserver.HTTPOptions{APIKey: testKey}))
	t.Cleanup(hs.Close)
	connectWith := func(hc *http.Client) (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx30(t),
			&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc, MaxRetries: -1}, nil)
	}
	if cs, err := connectWith(hs.Client()); err == nil {
		_ = cs.Close()
		t.Error("a client without the key connected")
	}
	if cs, err := connectWith(withKey(hs.Client(), "wrong-key")); err == nil {
		_ = cs.Close()
		t.Error("a client with a wrong key connected")
	}
	cs, err := connectWith(withKey(hs.Client(), testKey))
	if err != nil {
		t.Fatalf("with the key: %v", err)
	}
	defer cs.Close()

	callBody := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"massgen_run","arguments":{"question":"q","config":"team"}}}`
	for _, auth := range []string{"", "Bearer wrong-key", "Basic " + testKey, "Bearer " + testKey + "x", testKey} {
		req, _ := http.NewRequestWithContext(ctx30(t), http.MethodPost, hs.URL, strings.NewReader(callBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Error struct{ Code string } }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") || body.Error.Code == "" {
			t.Errorf("Authorization %q: status %d, WWW-Authenticate %q, code %q; want 401", auth, resp.StatusCode,
				resp.Header.Get("WWW-Authenticate"), body.Error.Code)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(sim.Requests()); n != 0 {
		t.Fatalf("refused requests started a run: the team made %d requests", n)
	}
	res, err := cs.CallTool(ctx30(t), &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "q", "config": "team"}})
	if err != nil || res.IsError || len(sim.Requests()) == 0 {
		t.Fatalf("with the key: %v %v (%d requests)", err, res, len(sim.Requests()))
	}

	// A server given no key serves nobody.
	closed := httptest.NewServer(newServer(t, mcpserver.Options{NoLogs: true}).Handler(mcpserver.HTTPOptions{}))
	t.Cleanup(closed.Close)
	resp, err := closed.Client().Post(closed.URL, "application/json", strings.NewReader(callBody))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a key set: status %d, want 401", resp.StatusCode)
	}
}
