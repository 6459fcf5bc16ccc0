package codex

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// The events of a turn in which Codex ran a command, called an MCP tool of
// the agent's and the workflow tool, and answered (lines as Codex 0.171.0
// writes them).
const turn = `{"type":"thread.started","thread_id":"01a23ddc-d9a7"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for ` + "`sim`" + ` not found."}}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"Let me look."}}
{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc ls","aggregated_output":"a.txt\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}
{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":{"content":[{"type":"text","text":"found"}]},"status":"completed"}}
{"type":"item.completed","item":{"id":"item_5","type":"mcp_tool_call","server":"massgen","tool":"new_answer","arguments":{"content":"Paris"},"status":"completed"}}
{"type":"item.completed","item":{"id":"item_6","type":"agent_message","text":"Paris."}}
not json: a warning
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"cache_write_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":5}}
`

func TestDecodeATurn(t *testing.T) {
	d := Vendor{}.Decoder()
	var outs []agent.Outcome
	for l := range strings.Lines(turn) {
		outs = append(outs, d.Line([]byte(strings.TrimSpace(l)))...)
	}
	want := []string{"reasoning", "shell:ok", "shell:error", "mcp__docs__search:ok", "text", "model"}
	var got []string
	for _, o := range outs {
		switch o := o.(type) {
		case agent.Reasoning:
			got = append(got, "reasoning")
		case agent.Text:
			got = append(got, "text")
		case agent.ToolUsed:
			got = append(got, o.Tool+map[bool]string{false: ":ok", true: ":error"}[o.IsError])
		case agent.ModelCall:
			got = append(got, "model")
			if o.Usage != (llm.Usage{InputTokens: 100, OutputTokens: 20, ReasoningTokens: 5, CachedTokens: 40}) {
				t.Errorf("usage %+v", o.Usage)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	if u := outs[1].(agent.ToolUsed); u.Args != "/bin/bash -lc ls" || u.Result != "a.txt\n" {
		t.Errorf("command %+v", u)
	}
	if u := outs[3].(agent.ToolUsed); u.Args != `{"q":"x"}` || u.Result != "found" {
		t.Errorf("mcp call %+v", u)
	}
	res := d.End()
	if res.Session != "01a23ddc-d9a7" || res.Text != "Paris." || res.Err != nil || res.Usage.InputTokens != 100 {
		t.Errorf("result %+v", res)
	}
}

// Codex reports the attempts it retries as error events: they are failed
// model calls, not the task's failure when a turn then completes; an
// unreachable provider ends the task after maxOffline attempts, which
// Codex itself would go on retrying until the turn's deadline.
func TestDecodeRetries(t *testing.T) {
	d := Vendor{}.Decoder()
	var calls int
	for _, l := range []string{`{"type":"turn.started"}`,
		`{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}`,
		`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`} {
		for _, o := range d.Line([]byte(l)) {
			if mc, ok := o.(agent.ModelCall); ok {
				calls++
				if calls == 1 && (mc.Failure == nil || !mc.Failure.Retryable) {
					t.Errorf("the retried attempt: %+v", mc)
				}
			}
		}
	}
	if res := d.End(); res.Err != nil || calls != 2 || d.(cli.Stopper).Stop() {
		t.Errorf("after a retry that worked: err %v, %d model calls", res.Err, calls)
	}

	d = Vendor{}.Decoder()
	offline := `{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}`
	for i := range maxOffline {
		if d.(cli.Stopper).Stop() {
			t.Fatalf("stopped after %d attempts", i)
		}
		d.Line([]byte(offline))
	}
	var pe *llm.Error
	if !d.(cli.Stopper).Stop() || !errors.As(d.End().Err, &pe) || pe.Status != 0 || !pe.Retry {
		t.Errorf("unreachable provider: stop %v, err %v", d.(cli.Stopper).Stop(), d.End().Err)
	}
}

// A provider's refusal becomes an *llm.Error with its status, so the
// failure's kind is right; an error without a status is still the
// provider's.
func TestDecodeFailures(t *testing.T) {
	for _, c := range []struct {
		line   string
		status int
		retry  bool
		kind   coord.FailureKind
	}{
		{`{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided"}}`, 401, false, coord.FailAuth},
		{`{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}`, 429, true, coord.FailRateLimit},
		{`{"type":"error","message":"stream disconnected before completion"}`, 0, false, coord.FailProvider},
		{`{"type":"turn.failed","error":{"message":"Quota exceeded. Check your plan and billing details."}}`, 429, true, coord.FailQuota},
	} {
		d := Vendor{}.Decoder()
		outs := d.Line([]byte(c.line))
		if strings.Contains(c.line, "turn.failed") {
			if len(outs) != 1 || outs[0].(agent.ModelCall).Failure == nil || outs[0].(agent.ModelCall).Failure.Status != c.status {
				t.Errorf("%s: outcomes %+v, want a failed model call", c.line, outs)
			}
		}
		var pe *llm.Error
		err := d.End().Err
		if !errors.As(err, &pe) || pe.Status != c.status || pe.Retry != c.retry {
			t.Errorf("%s: error %#v", c.line, err)
		}
		if f := agent.FailureOf(err, "cx", Type, "m"); f.Kind != c.kind {
			t.Errorf("%s: failure kind %v, want %v", c.line, f.Kind, c.kind)
		}
	}
}

func TestPrepare(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	inv := &cli.Invocation{Workdir: ws, Home: home, Model: "gpt-5.4", BaseURL: "http://127.0.0.1:9/v1/", APIKey: "sk-test",
		System: "Be brief.", Prompt: "-- a prompt that looks like a flag",
		Workflow:   &cli.MCPServer{Name: cli.WorkflowServer, URL: "http://127.0.0.1:8/mcp", Headers: map[string]string{"Authorization": "Bearer tok"}},
		MCPServers: []cli.MCPServer{{Name: `odd "name"`, Command: "npx", Args: []string{"-y", "srv"}, Env: map[string]string{"K": "v"}}},
		Options: map[string]any{"approval_mode": "full-access", "model_reasoning_effort": "medium",
			"allowed_tools": []any{`mcp__odd "name"__run`, "mcp__other__x"}, "enable_web_search": false}}
	cmd, err := Vendor{}.Prepare(inv)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Stdin != inv.Prompt || cmd.Args[len(cmd.Args)-1] != "-" {
		t.Errorf("the prompt goes on stdin: args %q", cmd.Args)
	}
	if !slices.Contains(cmd.Args, "danger-full-access") {
		t.Errorf("approval_mode full-access, unsandboxed: args %q", cmd.Args)
	}
	inv.Sandboxed = true
	if cmd, _ = (Vendor{}).Prepare(inv); !slices.Contains(cmd.Args, "--dangerously-bypass-approvals-and-sandbox") {
		t.Errorf("sandboxed by massgen: args %q", cmd.Args)
	}
	codexHome := filepath.Join(home, ".codex")
	for _, kv := range []string{"CODEX_HOME=" + codexHome, "OPENAI_API_KEY=sk-test", "MASSGEN_MCP_TOKEN_0=Bearer tok"} {
		if !slices.Contains(cmd.Env, kv) {
			t.Errorf("env %q lacks %s", cmd.Env, kv)
		}
	}
	b, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for _, want := range []string{`"model" = "gpt-5.4"`, `"model_reasoning_effort" = "medium"`, `"base_url" = "http://127.0.0.1:9/v1"`,
		`"env_http_headers" = { "Authorization" = "MASSGEN_MCP_TOKEN_0" }`, `["mcp_servers"."odd \"name\""]`, `"enabled_tools" = ["run"]`, `"web_search" = "disabled"`, `"args" = ["-y", "srv"]`,
		`"check_for_update_on_startup" = false`, `"required" = true`} {
		if !strings.Contains(conf, want) {
			t.Errorf("config.toml lacks %s:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "tok") || strings.Contains(conf, "sk-test") {
		t.Errorf("a secret is in config.toml:\n%s", conf)
	}
	if s, _ := os.ReadFile(filepath.Join(codexHome, "instructions.md")); string(s) != "Be brief." {
		t.Errorf("instructions %q", s)
	}
}

func TestCheck(t *testing.T) {
	warns := Vendor{}.Check(map[string]any{"approval_mode": "suggest", "reasoning": map[string]any{"effort": "high", "budget": 3},
		"model_reasoning_effort": "high", "max_turns": 3, "cwd": "workspace", "command_line_execution_mode": "docker",
		"exclude_tools": []any{"mcp__docs__search", "Bash"}, "enable_web_search": true})
	want := []string{"approval_mode suggest", "Bash", "max_turns", "reasoning.budget"}
	if len(warns) != len(want) {
		t.Fatalf("warnings %q, want %d", warns, len(want))
	}
	for i, w := range want {
		if !strings.Contains(warns[i], w) {
			t.Errorf("warning %q, want it to name %s", warns[i], w)
		}
	}
}

// An unreachable provider ends the task as a provider failure, rather
// than Codex waiting "for network" until the turn's deadline.
func TestUnreachableProvider(t *testing.T) {
	path, _ := filepath.Abs(filepath.Join("..", "..", "..", "..", "tests", "cli-agents", "node_modules", ".bin"))
	prog, err := cli.Find(Vendor{}, path)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	defer func(n int) { maxOffline = n }(maxOffline)
	maxOffline = 1
	dir := t.TempDir()
	a := &cli.Agent{ID: "cx", Vendor: Vendor{}, Path: prog, Model: "sim-codex", BaseURL: closed, APIKey: "k",
		Workdir: dir, Home: filepath.Join(dir, ".home")}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var done agent.Done
	for o := range a.Run(ctx, agent.Task{Kind: agent.TaskPresent, User: "Present."}, agent.NewInbox()) {
		if d, ok := o.(agent.Done); ok {
			done = d
		}
	}
	if ctx.Err() != nil || done.Failure == nil || done.Failure.Kind != coord.FailProvider || !done.Failure.Retryable {
		t.Errorf("failure %+v (context: %v), want a retryable provider failure before the deadline", done.Failure, ctx.Err())
	}
}

// The npm launcher resolves to the native binary beside it; anything else
// is run as found.
func TestExecutable(t *testing.T) {
	dir := t.TempDir()
	target, ok := nativeTargets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		t.Skip("no native Codex for this platform")
	}
	mods := filepath.Join(dir, "node_modules")
	script := filepath.Join(mods, "@openai", "codex", "bin", "codex.js")
	bin := filepath.Join(mods, filepath.FromSlash(target[0]), "vendor", target[1], "bin", "codex")
	link := filepath.Join(mods, ".bin", "codex")
	for _, f := range []string{script, bin} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@openai/codex/bin/codex.js", link); err != nil {
		t.Fatal(err)
	}
	if got := (Vendor{}).Executable(link); got != bin {
		t.Errorf("Executable(%s) = %s, want %s", link, got, bin)
	}
	other := filepath.Join(dir, "codex")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := (Vendor{}).Executable(other); got != other {
		t.Errorf("a codex that is not the launcher: %s", got)
	}
	os.Remove(bin)
	if got := (Vendor{}).Executable(link); got != link {
		t.Errorf("without the native binary: %s, want the launcher", got)
	}
}

// The session file gives a ModelCall per response as its records are
// written, a line still being written waiting for the next read.
func TestRollout(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "12", "03")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-2026-12-03T22-42-06-thr1.jsonl")
	rec := func(ts string, in int) string {
		return `{"timestamp":"` + ts + `","type":"token_usage_record","payload":{"usage":{"input_tokens":` + strconv.Itoa(in) +
			`,"cached_input_tokens":1,"output_tokens":2,"reasoning_output_tokens":0}}}` + "\n"
	}
	first := `{"timestamp":"2026-12-03T22:42:07.000Z","type":"event_msg","payload":{"type":"task_started"}}` + "\n" +
		rec("2026-12-03T22:42:07.250Z", 10) + `{"timestamp":"2026-12-03T22:42:07.3`
	if err := os.WriteFile(path, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &decoder{roll: &rollout{home: home}}
	if outs := d.Line([]byte(`{"type":"thread.started","thread_id":"thr1"}`)); len(outs) != 0 {
		t.Fatalf("before the thread was known: %+v", outs)
	}
	outs := d.Line([]byte(`{"type":"turn.started"}`))
	if len(outs) != 1 || outs[0].(agent.ModelCall).Usage.InputTokens != 10 || outs[0].(agent.ModelCall).Duration != 250*time.Millisecond {
		t.Fatalf("first read: %+v", outs)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`00Z","type":"response_item","payload":{"type":"message"}}` + "\n" + rec("2026-12-03T22:42:08.000Z", 20))
	f.Close()
	outs = d.Line([]byte(`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}`))
	if len(outs) != 2 || outs[0].(agent.ModelCall).Usage.InputTokens != 20 {
		t.Fatalf("second read: %+v", outs)
	}
	// turn.completed adds no ModelCall of its own; the task's usage is the
	// records' (the turn's sum, when it is the same).
	if outs := d.Line([]byte(`{"type":"turn.completed","usage":{"input_tokens":30,"cached_input_tokens":2,"output_tokens":4}}`)); len(outs) != 0 {
		t.Errorf("turn.completed: %+v", outs)
	}
	if u := d.End().Usage; u != (llm.Usage{InputTokens: 30, CachedTokens: 2, OutputTokens: 4}) {
		t.Errorf("usage %+v", u)
	}
}
