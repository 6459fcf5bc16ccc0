package mcp

import (
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/redact"
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

// A server that fails to start is described with its command line and the
// tail of its stderr; a token in either (an argument, one it prints from
// its env) is masked as a provider's echoed key is.
func TestAFailedServersTokenIsMaskedInTheWarning(t *testing.T) {
	const token = "ghp_CanaryMcpToken0123456789abcdef"
	redact.SecretVar("GITHUB_TOKEN", token)
	dir := t.TempDir()
	crash := Server{Name: "gh", Command: "sh", Args: []string{"-c", `echo "auth failed for $GITHUB_TOKEN" >&2; exit 1`, "--token", token},
		Env: map[string]string{"GITHUB_TOKEN": token}}
	var mu sync.Mutex
	var warnings []string
	p, hs := started(t, Options{LogDir: dir, Warn: func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }}, crash)
	p.Tools("a", hs, nil, nil).Tools(ctxT(t))
	mu.Lock()
	joined := strings.Join(warnings, "\n")
	mu.Unlock()
	if !strings.Contains(joined, "MCP server gh failed to start") || !strings.Contains(joined, "auth failed for") {
		t.Fatalf("warnings do not describe the failure:\n%s", joined)
	}
	if strings.Contains(joined, "CanaryMcpToken") {
		t.Errorf("the token is in the warning:\n%s", joined)
	}
}
