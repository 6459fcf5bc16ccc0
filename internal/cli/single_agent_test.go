package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// The ui keys upstream stores but never reads decide how many calls a
// one-agent team makes: answer + review by default (upstream: 3 calls),
// one plain call without the orchestrator, three with the presentation.
func TestSingleAgentCallsFollowTheUIKeys(t *testing.T) {
	for _, tc := range []struct {
		name, ui string
		calls    []string
	}{
		{"default", "", []string{"answer", "vote"}},
		{"use_orchestrator_for_single_agent: false", "ui: {use_orchestrator_for_single_agent: false}\n", []string{"text"}},
		{"enable_final_presentation: true", "ui: {enable_final_presentation: true}\n", []string{"answer", "vote", "text"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := simtest.Start(t, "")
			cfg := fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: m, base_url: %q}}\n", url) + tc.ui
			r := massgen(t, t.Context(), map[string]string{"c.yaml": cfg}, nil, "--no-logs", "--config", "c.yaml", "What is 2+2?")
			if r.code != 0 || strings.TrimSpace(r.stdout) == "" {
				t.Fatalf("exit %d, stdout %q:\n%s", r.code, r.stdout, r.stderr)
			}
			var got []string
			for _, rec := range srv.Requests() {
				got = append(got, rec.Step)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.calls) {
				t.Errorf("model calls = %v, want %v", got, tc.calls)
			}
		})
	}
}
