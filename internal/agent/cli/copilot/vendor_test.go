package copilot_test

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
	"github.com/massgen/massgen/internal/agent/cli/copilot"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

func TestRegistered(t *testing.T) {
	if v, ok := cli.Lookup("copilot"); !ok || v.Program() != "copilot" {
		t.Fatalf("copilot: %v %v", v, ok)
	}
}

// The npm launcher is resolved to the native binary it would start.
func TestExecutableIsTheNativeBinary(t *testing.T) {
	found := copilotPath(t)
	got := copilot.Vendor{}.Executable(found)
	if filepath.Base(got) != "copilot" || !strings.Contains(got, "@github/copilot-") {
		t.Errorf("executable %q for %q", got, found)
	}
	if other := "/bin/sh"; (copilot.Vendor{}).Executable(other) != other {
		t.Error("a program that is not the launcher is not kept")
	}
}

func argValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// Prepare points the CLI at the endpoint with the key alone (BYOK,
// offline), writes the MCP servers to a file (the bearer token stays off
// the command line) and the instructions as a custom agent.
func TestPrepareLaysOutTheHome(t *testing.T) {
	home := t.TempDir()
	inv := &cli.Invocation{Home: home, Workdir: t.TempDir(), BaseURL: "http://127.0.0.1:8089/v1", APIKey: "key-1",
		System: "You are agent_a.", Prompt: "What is 2+2?", Options: map[string]any{"wire_api": "responses", "reasoning": map[string]any{"effort": "high"}},
		Workflow:   &cli.MCPServer{Name: "massgen", URL: "http://127.0.0.1:5000/mcp", Headers: map[string]string{"Authorization": "Bearer t0ken"}},
		MCPServers: []cli.MCPServer{{Name: "files", Command: "node", Args: []string{"server.js"}, Env: map[string]string{"X": "1"}}}}
	cmd, err := copilot.Vendor{}.Prepare(inv)
	if err != nil {
		t.Fatal(err)
	}
	if argValue(cmd.Args, "--model") != copilot.DefaultModel || argValue(cmd.Args, "--agent") != "massgen" ||
		argValue(cmd.Args, "--output-format") != "json" || argValue(cmd.Args, "--reasoning-effort") != "high" ||
		!slices.Contains(cmd.Args, "--allow-all") || !slices.Contains(cmd.Args, "--no-custom-instructions") ||
		cmd.Stdin != "What is 2+2?" || cmd.Decoder == nil || strings.Contains(strings.Join(cmd.Args, " "), "t0ken") {
		t.Errorf("command %q, stdin %q", cmd.Args, cmd.Stdin)
	}
	usage := argValue(cmd.Args, "--usage-output-file")
	if filepath.Dir(usage) != home {
		t.Errorf("usage file %q is not in the home", usage)
	}
	for _, kv := range []string{"COPILOT_HOME=" + filepath.Join(home, ".copilot"), "COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:8089/v1", "COPILOT_PROVIDER_TYPE=openai",
		"COPILOT_PROVIDER_WIRE_API=responses", "COPILOT_PROVIDER_API_KEY=key-1"} {
		if !slices.Contains(cmd.Env, kv) {
			t.Errorf("env %q lacks %s", cmd.Env, kv)
		}
	}
	b, err := os.ReadFile(filepath.Join(home, ".copilot", "mcp-config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type, URL, Command string
			Headers, Env       map[string]string
			Args, Tools        []string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	wf, files := cfg.MCPServers["massgen"], cfg.MCPServers["files"]
	if wf.Type != "http" || wf.URL != "http://127.0.0.1:5000/mcp" || wf.Headers["Authorization"] != "Bearer t0ken" ||
		!slices.Equal(wf.Tools, []string{"*"}) || files.Type != "local" || files.Command != "node" ||
		!slices.Equal(files.Args, []string{"server.js"}) || files.Env["X"] != "1" {
		t.Errorf("mcp-config.json: %s", b)
	}
	agentFile := filepath.Join(home, ".copilot", "agents", "massgen.agent.md")
	if b, err := os.ReadFile(agentFile); err != nil || !strings.HasPrefix(string(b), "---\nname: massgen\n") ||
		!strings.Contains(string(b), "---\nYou are agent_a.\n") {
		t.Errorf("agent file: %q %v", b, err)
	}
	// Anthropic's endpoint without /v1; no instructions: no agent; no base
	// URL: GitHub's service with the key as its token.
	inv.Options, inv.System = map[string]any{"provider_type": "anthropic", "model": "claude-x"}, ""
	cmd, err = copilot.Vendor{}.Prepare(inv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cmd.Env, "COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:8089") || !slices.Contains(cmd.Env, "COPILOT_PROVIDER_TYPE=anthropic") ||
		argValue(cmd.Args, "--model") != "claude-x" || slices.Contains(cmd.Args, "--agent") {
		t.Errorf("anthropic: args %q env %q", cmd.Args, cmd.Env)
	}
	if _, err := os.Stat(agentFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the previous task's agent is still there (%v)", err)
	}
	inv.BaseURL, inv.Options = "", nil
	cmd, _ = copilot.Vendor{}.Prepare(inv)
	if !slices.Contains(cmd.Env, "COPILOT_GITHUB_TOKEN=key-1") || slices.ContainsFunc(cmd.Env, func(s string) bool { return strings.HasPrefix(s, "COPILOT_PROVIDER") }) {
		t.Errorf("GitHub's service: env %q", cmd.Env)
	}
	inv.Options = map[string]any{"provider_type": "ollama"}
	if _, err := (copilot.Vendor{}).Prepare(inv); err == nil || !strings.Contains(err.Error(), "openai, anthropic, azure") {
		t.Errorf("provider_type ollama: %v", err)
	}
}

func TestCheckNamesKeysWithoutAnEquivalent(t *testing.T) {
	got := copilot.Vendor{}.Check(map[string]any{"model": "m", "provider_type": "openai", "cwd": "ws",
		"copilot_permission_policy": "approved", "system_message_mode": "append", "command_line_execution_mode": "docker"})
	if len(got) != 2 || !strings.Contains(got[0], "'copilot_permission_policy'") || !strings.Contains(got[1], "'system_message_mode'") {
		t.Errorf("warnings %q", got)
	}
	if got := (copilot.Vendor{}).Check(map[string]any{"wire_api": "chat"}); len(got) != 1 || !strings.Contains(got[0], "wire_api chat") {
		t.Errorf("warnings %q", got)
	}
}

// A stream as Copilot CLI 1.0.102 writes it, with its usage file.
func TestDecoderReadsTheStream(t *testing.T) {
	home := t.TempDir()
	cmd, err := copilot.Vendor{}.Prepare(&cli.Invocation{Home: home, BaseURL: "http://127.0.0.1:1/v1", Prompt: "x"})
	if err != nil {
		t.Fatal(err)
	}
	usage := `{"totalApiDurationMs":62,"modelMetrics":{"gpt-x":{"requests":{"count":2},"usage":{"inputTokens":900,"outputTokens":150,"cacheReadTokens":100,"cacheWriteTokens":0,"reasoningTokens":40}},
		"gpt-mini":{"requests":{"count":1},"usage":{"inputTokens":100,"outputTokens":10,"cacheReadTokens":0,"cacheWriteTokens":0,"reasoningTokens":0}}}}`
	if err := os.WriteFile(argValue(cmd.Args, "--usage-output-file"), []byte(usage), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"type":"session.tools_updated","data":{"model":"gpt-x"},"ephemeral":true}`,
		`{"type":"assistant.reasoning_delta","data":{"reasoningId":"r","deltaContent":"Think."},"ephemeral":true}`,
		`{"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":"Let me "},"ephemeral":true}`,
		`{"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":"write it."},"ephemeral":true}`,
		`{"type":"assistant.message","data":{"messageId":"m1","model":"gpt-x","content":"Let me write it.","toolRequests":[{}]}}`,
		`{"type":"model.call_failure","data":{"model":"gpt-x","statusCode":503,"durationMs":40,"failureKind":"api","errorMessage":"overloaded"}}`,
		`{"type":"tool.execution_start","timestamp":"2026-12-03T22:00:00.000Z","data":{"toolCallId":"c1","toolName":"bash","arguments":{"command":"echo hi"}}}`,
		`{"type":"assistant.message_delta","data":{"messageId":"s1","deltaContent":"sub-agent text","parentToolCallId":"c9"},"ephemeral":true}`,
		`{"type":"tool.execution_complete","timestamp":"2026-12-03T22:00:00.300Z","data":{"toolCallId":"c1","success":true,"result":{"content":"hi"}}}`,
		`{"type":"tool.execution_start","data":{"toolCallId":"c2","toolName":"edit","arguments":{"path":"/x"}}}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"c2","success":false,"error":{"message":"no such file","code":"failure"}}}`,
		`{"type":"tool.execution_start","data":{"toolCallId":"c3","toolName":"massgen-new_answer","arguments":{"content":"4"},"mcpServerName":"massgen","mcpToolName":"new_answer"}}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"c3","success":true,"result":{"content":"Answer recorded"}}}`,
		`{"type":"assistant.message_delta","data":{"messageId":"m2","deltaContent":"Done."},"ephemeral":true}`,
		`{"type":"assistant.message","data":{"messageId":"m2","model":"gpt-x","content":"Done."}}`,
		`{"type":"result","timestamp":"2026-12-03T22:00:01.000Z","sessionId":"s-1","exitCode":0,"usage":{"premiumRequests":0}}`,
	}
	var texts, reasoning []string
	var tools []agent.ToolUsed
	var calls []agent.ModelCall
	for _, l := range lines {
		for _, o := range cmd.Decoder.Line([]byte(l)) {
			switch o := o.(type) {
			case agent.Text:
				texts = append(texts, o.Text)
			case agent.Reasoning:
				reasoning = append(reasoning, o.Text)
			case agent.ToolUsed:
				tools = append(tools, o)
			case agent.ModelCall:
				calls = append(calls, o)
			}
		}
	}
	res := cmd.Decoder.End()
	if strings.Join(texts, "|") != "Let me |write it.|Done." || strings.Join(reasoning, "") != "Think." {
		t.Errorf("texts %q reasoning %q", texts, reasoning)
	}
	if len(tools) != 2 || tools[0].Tool != "bash" || tools[0].Args != `{"command":"echo hi"}` || tools[0].Result != "hi" ||
		tools[0].IsError || tools[0].Duration != 300*time.Millisecond || tools[1].Tool != "edit" || !tools[1].IsError || tools[1].Result != "no such file" {
		t.Errorf("tools %+v", tools)
	}
	want := llm.Usage{InputTokens: 1000, OutputTokens: 160, ReasoningTokens: 40, CachedTokens: 100}
	if res.Usage != want || res.Session != "s-1" || res.Text != "Done." || res.Err != nil {
		t.Errorf("result %+v", res)
	}
	if len(calls) != 3 || calls[0].Failure == nil || calls[0].Failure.Status != 503 || calls[0].Duration != 40*time.Millisecond ||
		calls[1].Model != "gpt-mini" || calls[2].Model != "gpt-x" || calls[2].Usage.InputTokens != 900 || calls[2].Failure != nil {
		t.Errorf("model calls %+v", calls)
	}
}

func TestDecoderProviderErrors(t *testing.T) {
	cases := []struct {
		data   string
		status int
		kind   coord.FailureKind
	}{
		{`{"errorType":"authentication","message":"Authentication failed with provider at http://127.0.0.1:1/v1 (HTTP 401).","statusCode":401}`, 401, coord.FailAuth},
		{`{"errorType":"quota","message":"You have run out of credits."}`, 429, coord.FailQuota},
		{`{"errorType":"rate_limit","message":"Slow down.","statusCode":429}`, 429, coord.FailRateLimit},
		{`{"errorType":"query","message":"Could not connect to local model provider at http://127.0.0.1:9/v1."}`, 0, coord.FailProvider},
	}
	for _, tc := range cases {
		d := copilot.Vendor{}.Decoder()
		d.Line([]byte(`{"type":"session.error","data":` + tc.data + `}`))
		d.Line([]byte(`{"type":"result","sessionId":"s","exitCode":1}`))
		res := d.End()
		if res.Err == nil {
			t.Errorf("%s: no error", tc.data)
			continue
		}
		f := agent.FailureOf(res.Err, "a", "copilot", "m")
		var pe *llm.Error
		if !errors.As(res.Err, &pe) || f.Status != tc.status || f.Kind != tc.kind {
			t.Errorf("%s: %v: status %d kind %v", tc.data, res.Err, f.Status, f.Kind)
		}
	}
	d := copilot.Vendor{}.Decoder()
	d.Line([]byte(`{"type":"result","sessionId":"s","exitCode":2}`))
	if res := d.End(); res.Err == nil {
		t.Error("a non-zero exit code without an error event is no error")
	}
}
