package cli

import (
	"strings"
	"testing"
)

// --model's one agent is called "agent": its errors name it once, never
// "agent agent: …" (issue 22 item 7).
func TestOneModelAgentIsNamedOnce(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--no-logs", "--model", "gpt-4o-mini", "q")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "massgen: agent: backend openai needs an API key: set OPENAI_API_KEY") ||
		strings.Contains(r.stderr, "agent agent") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	r = massgen(t, t.Context(), map[string]string{"c.yaml": "agents:\n  - id: critic\n    backend: {type: openai, model: gpt-4o-mini}\n"},
		nil, "--no-logs", "--config", "c.yaml", "q")
	if !strings.Contains(r.stderr, "massgen: agent critic: backend openai needs an API key") {
		t.Errorf("a named agent: stderr %q", r.stderr)
	}
}
