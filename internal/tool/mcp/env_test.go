package mcp

import (
	"strings"
	"testing"
)

// Finding 1 of issue 17, for servers without a workspace: a stdio server
// started with massgen's whole environment got every API key. It gets the
// MCP SDKs' default set and what its config names, nothing else.
func TestStdioServerGetsOnlyTheDefaultSetAndItsEnv(t *testing.T) {
	const canary = "sk-canary-mcp-env-0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", canary)
	t.Setenv("SOME_TOKEN", canary)
	cfg := everything(t)
	cfg.Env = map[string]string{"GIVEN_BY_CONFIG": "yes"}
	p, hs := started(t, Options{}, cfg)
	set := toolsOf(t, p.Tools("a", hs, nil, nil))
	got := call(t, set, "mcp__everything__get-env", `{}`)
	if got.IsError {
		t.Fatalf("get-env: %+v", got)
	}
	if strings.Contains(got.Content, canary) {
		t.Errorf("the server sees a key massgen holds: %s", got.Content)
	}
	for _, want := range []string{"GIVEN_BY_CONFIG", "PATH"} {
		if !strings.Contains(got.Content, want) {
			t.Errorf("the server lacks %s: %s", want, got.Content)
		}
	}
}
