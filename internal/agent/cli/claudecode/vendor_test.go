package claudecode

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

func prepare(t *testing.T, inv *cli.Invocation) cli.Command {
	t.Helper()
	if inv.Home == "" {
		inv.Home = t.TempDir()
	}
	cmd, err := Vendor{}.Prepare(inv)
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// flag returns the value after name in args ("" and false when absent).
func flag(args []string, name string) (string, bool) {
	i := slices.Index(args, name)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

func env(cmd cli.Command, key string) string {
	v := ""
	for _, kv := range cmd.Env {
		if k, val, _ := strings.Cut(kv, "="); k == key {
			v = val // the last one wins, as for exec
		}
	}
	return v
}

func TestPrepareMapsUpstreamKeys(t *testing.T) {
	inv := &cli.Invocation{Model: "claude-opus-4-5", BaseURL: "http://127.0.0.1:9/v1", APIKey: "sk-test",
		System: "MASSGEN RULES", Prompt: "the task",
		Workflow:   &cli.MCPServer{Name: cli.WorkflowServer, URL: "http://127.0.0.1:7/mcp", Headers: map[string]string{"Authorization": "Bearer tok"}},
		MCPServers: []cli.MCPServer{{Name: "weather", Command: "npx", Args: []string{"-y", "w"}, Env: map[string]string{"K": "v"}}},
		Options: map[string]any{"permission_mode": "acceptEdits", "allowed_tools": []any{"Read", "Bash(git *)"},
			"disallowed_tools": "NotebookEdit", "exclude_tools": []string{"mcp__weather__forecast"}, "max_turns": 12, "append_system_prompt": "BE BRIEF",
			"reasoning": map[string]any{"effort": "high", "budget_tokens": 4096}, "enable_web_search": true,
			"env": map[string]any{"FOO": "bar", "ANTHROPIC_BASE_URL": "http://evil"}}}
	cmd := prepare(t, inv)
	if cmd.Stdin != "the task" || slices.Contains(cmd.Args, "the task") {
		t.Errorf("the prompt goes by stdin: %q %v", cmd.Stdin, cmd.Args)
	}
	for name, want := range map[string]string{"--permission-mode": "bypassPermissions", "--model": "claude-opus-4-5",
		"--max-turns": "12", "--effort": "high", "--output-format": "stream-json", "--setting-sources": "",
		"--allowedTools": "mcp__massgen,Read,Bash(git *)"} {
		if got, ok := flag(cmd.Args, name); !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q", name, got, ok, want)
		}
	}
	denied, _ := flag(cmd.Args, "--disallowedTools")
	for _, d := range []string{"Bash(rm*)", "Task", "Skill", "NotebookEdit", "mcp__weather__forecast"} {
		if !slices.Contains(strings.Split(denied, ","), d) {
			t.Errorf("%s not disallowed: %s", d, denied)
		}
	}
	if strings.Contains(denied, "WebSearch") {
		t.Errorf("web search was enabled: %s", denied)
	}
	for k, want := range map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "sk-test",
		"MAX_THINKING_TOKENS": "4096", "IS_SANDBOX": "1", "FOO": "bar", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "ENABLE_TOOL_SEARCH": "false"} {
		if got := env(cmd, k); got != want {
			t.Errorf("env %s = %q, want %q", k, got, want)
		}
	}
	sysFile, ok := flag(cmd.Args, "--system-prompt-file")
	if !ok {
		t.Fatalf("no system prompt file: %v", cmd.Args)
	}
	if b, _ := os.ReadFile(sysFile); string(b) != "MASSGEN RULES\n\nBE BRIEF" {
		t.Errorf("system prompt %q", b)
	}
	mcpFile, _ := flag(cmd.Args, "--mcp-config")
	fi, err := os.Stat(mcpFile)
	if err != nil || fi.Mode().Perm() != 0o600 || !strings.HasPrefix(mcpFile, inv.Home) {
		t.Fatalf("mcp config %s: %v %v", mcpFile, fi, err)
	}
	var conf struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	b, _ := os.ReadFile(mcpFile)
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	wf, w := conf.MCPServers["massgen"], conf.MCPServers["weather"]
	if wf["type"] != "http" || wf["url"] != "http://127.0.0.1:7/mcp" || wf["headers"].(map[string]any)["Authorization"] != "Bearer tok" ||
		wf["timeout"] != float64(24*3600*1000) {
		t.Errorf("workflow server %v", wf)
	}
	if w["type"] != "stdio" || w["command"] != "npx" || w["env"].(map[string]any)["K"] != "v" {
		t.Errorf("agent's server %v", w)
	}
	if slices.Contains(cmd.Args, "Bearer tok") || slices.Contains(cmd.Args, "sk-test") {
		t.Errorf("a secret is on the command line: %v", cmd.Args)
	}
}

func TestPrepareDefaults(t *testing.T) {
	cmd := prepare(t, &cli.Invocation{System: "S", Prompt: "p"})
	if m, _ := flag(cmd.Args, "--permission-mode"); m != "bypassPermissions" {
		t.Errorf("mode %q", m)
	}
	if _, ok := flag(cmd.Args, "--model"); ok {
		t.Error("a model without one given")
	}
	denied, _ := flag(cmd.Args, "--disallowedTools")
	if !strings.Contains(denied, "WebSearch") || !strings.Contains(denied, "WebFetch") {
		t.Errorf("web tools allowed by default: %s", denied)
	}
	if env(cmd, "ANTHROPIC_API_KEY") != "" || env(cmd, "ANTHROPIC_BASE_URL") != "" {
		t.Error("an endpoint or key without one given")
	}

	// Plan mode takes the writing tools away; use_default_prompt keeps
	// Claude Code's prompt.
	cmd = prepare(t, &cli.Invocation{System: "S", Options: map[string]any{"permission_mode": "plan", "use_default_prompt": true,
		"thinking": map[string]any{"type": "disabled"}}})
	if m, _ := flag(cmd.Args, "--permission-mode"); m != "bypassPermissions" {
		t.Errorf("mode %q", m)
	}
	if denied, _ := flag(cmd.Args, "--disallowedTools"); !slices.Contains(strings.Split(denied, ","), "Write") || !slices.Contains(strings.Split(denied, ","), "Bash") {
		t.Errorf("plan mode leaves the writing tools: %s", denied)
	}
	if _, ok := flag(cmd.Args, "--append-system-prompt-file"); !ok || slices.Contains(cmd.Args, "--system-prompt-file") {
		t.Errorf("use_default_prompt: %v", cmd.Args)
	}
	if th, _ := flag(cmd.Args, "--thinking"); th != "disabled" {
		t.Errorf("thinking %q", th)
	}
	// system_prompt replaces the default even with use_default_prompt.
	cmd = prepare(t, &cli.Invocation{System: "S", Options: map[string]any{"system_prompt": "BASE", "use_default_prompt": true}})
	f, ok := flag(cmd.Args, "--system-prompt-file")
	if b, _ := os.ReadFile(f); !ok || string(b) != "BASE\n\nS" {
		t.Errorf("system prompt %q", b)
	}
}

func TestCheckNamesKeysWithoutEquivalent(t *testing.T) {
	w := Vendor{}.Check(map[string]any{"permission_mode": "sometimes", "max_turns": "many", "approval_mode": "yolo",
		"allowed_tools": []any{"Read"}, "reasoning": map[string]any{"effort": "high", "verbosity": "low"},
		"env": map[string]any{"ANTHROPIC_API_KEY": "x"}, "cwd": "ws"})
	got := strings.Join(w, "\n")
	for _, want := range []string{"permission_mode: sometimes", "max_turns: many", "approval_mode has no Claude Code equivalent",
		"reasoning.verbosity has no Claude Code equivalent", "env: ANTHROPIC_API_KEY is set by massgen"} {
		if !strings.Contains(got, want) {
			t.Errorf("no warning %q in:\n%s", want, got)
		}
	}
	if len(w) != 5 {
		t.Errorf("%d warnings:\n%s", len(w), got)
	}
	// massgen's own keys (the app passes them along) are the config's to judge.
	if w := (Vendor{}).Check(map[string]any{"permission_mode": "bypassPermissions", "max_turns": 3, "cwd": "ws",
		"context_paths": []any{}, "command_line_execution_mode": "docker", "enable_mcp_command_line": true,
		"exclude_tools": []any{"mcp__x__y"}, "enable_image_generation": true}); len(w) != 0 {
		t.Errorf("warnings for good keys: %v", w)
	}
}

func decode(lines ...string) ([]agent.Outcome, cli.Result) {
	d := newDecoder()
	var out []agent.Outcome
	for _, l := range lines {
		out = append(out, d.Line([]byte(l))...)
	}
	return out, d.End()
}

func TestDecodeProviderErrors(t *testing.T) {
	out, res := decode(`{"type":"system","subtype":"init","session_id":"s1","model":"m"}`,
		`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"retry_delay_ms":547,"error_status":429,"error":"rate_limit","session_id":"s1"}`,
		`{"type":"assistant","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: Request rejected (429)"}]},"parent_tool_use_id":null,"session_id":"s1","error":"rate_limit","is_api_error_message":true,"api_error_status":429}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: 429 rate limited","session_id":"s1","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}`)
	pe, ok := res.Err.(*llm.Error)
	if !ok || pe.Status != 429 || !pe.Retry || pe.Model != "m" || res.Session != "s1" || res.Text != "" {
		t.Fatalf("result %+v", res)
	}
	if f := agent.FailureOf(res.Err, "a", Type, "m"); f.Kind != coord.FailRateLimit {
		t.Errorf("failure %+v", f)
	}
	// The failed attempt is a model call of its own; the error message is
	// not the model's text.
	if len(out) != 1 {
		t.Fatalf("outcomes %+v", out)
	}
	if mc, ok := out[0].(agent.ModelCall); !ok || mc.Failure == nil || mc.Failure.Status != 429 || mc.Failure.Kind != coord.FailRateLimit {
		t.Errorf("retry %+v", out[0])
	}
	_, res = decode(`{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s2","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":2}}`)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "error_max_turns") || res.CostUSD != 0.5 || res.Usage.InputTokens != 10 {
		t.Errorf("result %+v", res)
	}
	// A workflow server that did not connect is said so.
	_, res = decode(`{"type":"system","subtype":"init","session_id":"s","mcp_servers":[{"name":"massgen","status":"failed"}]}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}`)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "workflow tools") {
		t.Errorf("result %+v", res)
	}
}

// Stopped before its result line (after its action's grace), a task's
// usage is the sum of its responses', and its text the last one's.
func TestDecodeWithoutResult(t *testing.T) {
	out, res := decode(
		`{"type":"stream_event","event":{"type":"message_start","message":{"model":"m","id":"a","usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":1}}},"parent_tool_use_id":null}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}},"parent_tool_use_id":null}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}},"parent_tool_use_id":null}`,
		`{"type":"assistant","message":{"id":"a","model":"m","content":[{"type":"text","text":"Hello"},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"x"}}]},"parent_tool_use_id":null}`,
		`{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":7}},"parent_tool_use_id":null}`,
		`{"type":"stream_event","event":{"type":"message_stop"},"parent_tool_use_id":null}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"contents"}],"is_error":false}]},"parent_tool_use_id":null}`,
		`not json`)
	var kinds []string
	for _, o := range out {
		switch o := o.(type) {
		case agent.Reasoning:
			kinds = append(kinds, "reasoning:"+o.Text)
		case agent.Text:
			kinds = append(kinds, "text:"+o.Text)
		case agent.ModelCall:
			kinds = append(kinds, "call")
			if o.Usage != (llm.Usage{InputTokens: 150, OutputTokens: 7, CachedTokens: 50}) || o.Model != "m" {
				t.Errorf("model call %+v", o)
			}
		case agent.ToolUsed:
			kinds = append(kinds, "tool:"+o.Tool+":"+o.Result)
		}
	}
	if want := []string{"reasoning:hmm", "text:Hello", "call", "tool:Read:contents"}; !slices.Equal(kinds, want) {
		t.Errorf("outcomes %v, want %v", kinds, want)
	}
	if res.Usage.InputTokens != 150 || res.Usage.OutputTokens != 7 || res.Text != "Hello" || res.Err != nil {
		t.Errorf("result %+v", res)
	}
}
