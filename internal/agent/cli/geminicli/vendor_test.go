package geminicli_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/geminicli"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

func TestRegistered(t *testing.T) {
	if v, ok := cli.Lookup("gemini_cli"); !ok || v.Program() != "gemini" {
		t.Fatalf("gemini_cli: %v %v", v, ok)
	}
}

// Prepare lays out the settings the CLI needs to reach the endpoint with
// the key alone, the MCP servers, the instructions, and its command line.
func TestPrepareLaysOutTheHome(t *testing.T) {
	home := t.TempDir()
	inv := &cli.Invocation{Home: home, Workdir: t.TempDir(), BaseURL: "http://127.0.0.1:8089/v1", APIKey: "key-1",
		System: "You are agent_a.", Prompt: "What is 2+2?",
		Options:    map[string]any{"approval_mode": "plan", "max_turns": 7},
		Workflow:   &cli.MCPServer{Name: "massgen", URL: "http://127.0.0.1:5000/mcp", Headers: map[string]string{"Authorization": "Bearer t0ken"}},
		MCPServers: []cli.MCPServer{{Name: "files", Command: "node", Args: []string{"server.js"}, Env: map[string]string{"X": "1"}}}}
	cmd, err := geminicli.Vendor{}.Prepare(inv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-m", geminicli.DefaultModel, "--output-format", "stream-json", "--approval-mode", "plan", "--skip-trust"}
	if !slices.Equal(cmd.Args, want) || cmd.Stdin != "What is 2+2?" {
		t.Errorf("args %q, stdin %q", cmd.Args, cmd.Stdin)
	}
	for _, kv := range []string{"GEMINI_API_KEY=key-1", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8089", "GEMINI_CLI_NO_RELAUNCH=true",
		"GOOGLE_GENAI_API_VERSION=v1beta", "HTTPS_PROXY=", "GEMINI_SYSTEM_MD="} {
		if !slices.Contains(cmd.Env, kv) {
			t.Errorf("env %q lacks %s", cmd.Env, kv)
		}
	}
	var s struct {
		Security struct {
			Auth        struct{ SelectedType string }
			FolderTrust struct{ Enabled *bool }
		}
		Privacy   struct{ UsageStatisticsEnabled *bool }
		Telemetry struct{ Enabled *bool }
		General   struct {
			EnableAutoUpdate, EnableAutoUpdateNotification *bool
			MaxAttempts                                    int
		}
		Model      struct{ MaxSessionTurns int }
		MCPServers map[string]struct {
			HTTPURL string `json:"httpUrl"`
			Headers map[string]string
			Command string
			Args    []string
			Env     map[string]string
			Trust   bool
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	off := func(p *bool) bool { return p != nil && !*p }
	if s.Security.Auth.SelectedType != "gemini-api-key" || !off(s.Security.FolderTrust.Enabled) || !off(s.Privacy.UsageStatisticsEnabled) ||
		!off(s.Telemetry.Enabled) || !off(s.General.EnableAutoUpdate) || !off(s.General.EnableAutoUpdateNotification) ||
		s.General.MaxAttempts != 4 || s.Model.MaxSessionTurns != 7 {
		t.Errorf("settings: %s", b)
	}
	wf, files := s.MCPServers["massgen"], s.MCPServers["files"]
	if wf.HTTPURL != "http://127.0.0.1:5000/mcp" || wf.Headers["Authorization"] != "Bearer t0ken" || !wf.Trust ||
		files.Command != "node" || !slices.Equal(files.Args, []string{"server.js"}) || files.Env["X"] != "1" || len(s.MCPServers) != 2 {
		t.Errorf("mcpServers: %s", b)
	}
	if fi, err := os.Stat(filepath.Join(home, ".gemini", "settings.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("settings.json holds a bearer token: mode %v (%v)", fi.Mode(), err)
	}
	memory := filepath.Join(home, ".gemini", geminicli.InstructionsFile)
	if b, err := os.ReadFile(memory); err != nil || string(b) != "You are agent_a." {
		t.Errorf("the instructions: %q %v", b, err)
	}
	// The next task without instructions or workflow tools reads neither.
	inv.System, inv.Workflow, inv.Model, inv.Options = "", nil, "gemini-2.5-flash", nil
	cmd, err = geminicli.Vendor{}.Prepare(inv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(memory); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the previous task's instructions are still there (%v)", err)
	}
	if !slices.Equal(cmd.Args[:2], []string{"-m", "gemini-2.5-flash"}) || !slices.Contains(cmd.Args, "yolo") {
		t.Errorf("args %q", cmd.Args)
	}
	b, _ = os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	if strings.Contains(string(b), "massgen") || strings.Contains(string(b), "maxSessionTurns") {
		t.Errorf("settings kept the previous task's: %s", b)
	}
	inv.Options = map[string]any{"approval_mode": "ask"}
	if _, err := (geminicli.Vendor{}).Prepare(inv); err == nil || !strings.Contains(err.Error(), "yolo, auto_edit, default, plan") {
		t.Errorf("approval_mode ask: %v", err)
	}
}

// Keys without an equivalent are named; the vendor's own and massgen's
// are not.
func TestCheckNamesKeysWithoutAnEquivalent(t *testing.T) {
	got := geminicli.Vendor{}.Check(map[string]any{"approval_mode": "yolo", "model": "m", "max_turns": 3, "cwd": "ws",
		"command_line_execution_mode": "docker", "enable_mcp_command_line": true, "permission_mode": "bypassPermissions",
		"allowed_tools": []string{"Read"}})
	if len(got) != 2 || !strings.Contains(got[0], "'allowed_tools'") || !strings.Contains(got[1], "'permission_mode'") {
		t.Errorf("warnings %q", got)
	}
	got = geminicli.Vendor{}.Check(map[string]any{"approval_mode": "full-auto"})
	if len(got) != 1 || !strings.Contains(got[0], "approval_mode full-auto") {
		t.Errorf("warnings %q", got)
	}
}

func decode(lines ...string) ([]agent.Outcome, cli.Result) {
	d := geminicli.Vendor{}.Decoder()
	var out []agent.Outcome
	for _, l := range lines {
		out = append(out, d.Line([]byte(l))...)
	}
	return out, d.End()
}

// A stream as Gemini CLI 0.61.0 writes it: text, one of its own tools, a
// workflow tool (reported by the workflow server, not here), usage per
// model with thinking tokens in the total.
func TestDecoderReadsTheStream(t *testing.T) {
	out, res := decode(
		`{"type":"init","timestamp":"2026-12-03T21:40:11.045Z","session_id":"s-1","model":"gemini-2.5-pro"}`,
		`{"type":"message","timestamp":"2026-12-03T21:40:11.048Z","role":"user","content":"hello"}`,
		`{"type":"message","timestamp":"2026-12-03T21:40:11.100Z","role":"assistant","content":"Let me write ","delta":true}`,
		`{"type":"message","timestamp":"2026-12-03T21:40:11.110Z","role":"assistant","content":"it.","delta":true}`,
		`{"type":"tool_use","timestamp":"2026-12-03T21:40:11.200Z","tool_name":"write_file","tool_id":"w1","parameters":{"file_path":"a.txt","content":"x"}}`,
		`{"type":"tool_result","timestamp":"2026-12-03T21:40:11.450Z","tool_id":"w1","status":"success","output":"Created a.txt"}`,
		`{"type":"tool_use","timestamp":"2026-12-03T21:40:11.500Z","tool_name":"run_shell_command","tool_id":"r1","parameters":{"command":"false"}}`,
		`{"type":"tool_result","timestamp":"2026-12-03T21:40:11.600Z","tool_id":"r1","status":"error","output":"","error":{"type":"shell","message":"exit 1"}}`,
		`{"type":"tool_use","timestamp":"2026-12-03T21:40:11.700Z","tool_name":"mcp_massgen_new_answer","tool_id":"n1","parameters":{"content":"4"}}`,
		`{"type":"tool_result","timestamp":"2026-12-03T21:40:11.800Z","tool_id":"n1","status":"success","output":"Answer recorded"}`,
		`not json`,
		`{"type":"message","timestamp":"2026-12-03T21:40:11.900Z","role":"assistant","content":"Done.","delta":true}`,
		`{"type":"result","timestamp":"2026-12-03T21:40:12.000Z","status":"success","stats":{"total_tokens":1200,"input_tokens":1000,"output_tokens":150,"cached":100,"input":900,"duration_ms":900,"tool_calls":3,"models":{"gemini-2.5-pro":{"total_tokens":1100,"input_tokens":900,"output_tokens":150,"cached":100,"input":800},"gemini-2.5-flash-lite":{"total_tokens":100,"input_tokens":100,"output_tokens":0,"cached":0,"input":100}}}}`)
	var texts []string
	var tools []agent.ToolUsed
	var calls []agent.ModelCall
	for _, o := range out {
		switch o := o.(type) {
		case agent.Text:
			texts = append(texts, o.Text)
		case agent.ToolUsed:
			tools = append(tools, o)
		case agent.ModelCall:
			calls = append(calls, o)
		default:
			t.Errorf("unexpected %T", o)
		}
	}
	if strings.Join(texts, "|") != "Let me write |it.|Done." {
		t.Errorf("texts %q", texts)
	}
	if len(tools) != 2 || tools[0].Tool != "write_file" || tools[0].Args != `{"file_path":"a.txt","content":"x"}` ||
		tools[0].Result != "Created a.txt" || tools[0].IsError || tools[0].Duration != 250*time.Millisecond ||
		tools[1].Tool != "run_shell_command" || !tools[1].IsError || tools[1].Result != "exit 1" {
		t.Errorf("tools %+v", tools)
	}
	want := llm.Usage{InputTokens: 1000, OutputTokens: 200, ReasoningTokens: 50, CachedTokens: 100}
	if res.Usage != want || res.Session != "s-1" || res.Text != "Done." || res.Err != nil {
		t.Errorf("result %+v", res)
	}
	if len(calls) != 2 || calls[0].Model != "gemini-2.5-flash-lite" || calls[1].Model != "gemini-2.5-pro" ||
		calls[0].Usage.InputTokens+calls[1].Usage.InputTokens != want.InputTokens ||
		calls[0].Usage.OutputTokens+calls[1].Usage.OutputTokens != want.OutputTokens {
		t.Errorf("model calls %+v", calls)
	}
}

// The provider's errors, as the CLI quotes them, keep their status, so a
// failure has its kind.
func TestDecoderProviderErrors(t *testing.T) {
	cases := []struct {
		msg    string
		status int
		kind   coord.FailureKind
	}{
		{`[API Error: {\"error\":{\"code\":401,\"message\":\"API key not valid. Please pass a valid API key.\",\"status\":\"UNAUTHENTICATED\"}}]`, 401, coord.FailAuth},
		{`[API Error: You exceeded your current quota, please check your plan and billing details.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method`, 429, coord.FailQuota},
		{`[API Error: The model is overloaded. (Status: UNAVAILABLE)]`, 503, coord.FailProvider},
		{`[API Error: {\"error\":{\"message\":\"nope\",\"status\":\"PERMISSION_DENIED\"}}]`, 403, coord.FailAuth},
		{`Loop detected`, 0, coord.FailOther},
	}
	for _, tc := range cases {
		_, res := decode(`{"type":"init","session_id":"s","model":"gemini-x"}`,
			`{"type":"result","status":"error","error":{"type":"unknown","message":"`+tc.msg+`"},"stats":{"models":{}}}`)
		if res.Err == nil {
			t.Errorf("%s: no error", tc.msg)
			continue
		}
		f := agent.FailureOf(res.Err, "a", "gemini_cli", "gemini-x")
		var pe *llm.Error
		if errors.As(res.Err, &pe) != (tc.status != 0) || f.Status != tc.status || f.Kind != tc.kind {
			t.Errorf("%s: %v: status %d kind %v", tc.msg, res.Err, f.Status, f.Kind)
		}
	}
	// An error event without a result (the CLI died) is the task's error.
	if _, res := decode(`{"type":"error","severity":"error","message":"Maximum session turns exceeded"}`); res.Err == nil ||
		!strings.Contains(res.Err.Error(), "Maximum session turns exceeded") {
		t.Errorf("error event: %v", res.Err)
	}
}
