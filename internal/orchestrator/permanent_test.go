package orchestrator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// A provider that refuses the request itself — a model it does not serve
// (404 model_not_found), a refused key (401/403), an invalid request (400)
// — is not a moment of trouble: the agent leaves at once, after one
// request, with an error naming agent, provider, model and status, instead
// of spending its failure budget on turns that fail the same way (which
// took about 6.6 s of backoff before). The others finish the run.
func TestAPermanentProviderErrorEndsTheAgentAtOnce(t *testing.T) {
	for _, tc := range []struct {
		status int
		kind   coord.FailureKind
	}{
		{404, coord.FailBadRequest},
		{401, coord.FailAuth},
		{403, coord.FailAuth},
		{400, coord.FailBadRequest},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv, agents := simTeam(t, fmt.Sprintf(`
models:
  sim-b:
    always: {fault: "%d"}
`, tc.status), "a", "b")
			res, rec := run(t, agents, Options{})
			if res.Status != Completed || res.Winner != "a" {
				t.Fatalf("status=%s winner=%q (%v), want a to win without b", res.Status, res.Winner, res.Err)
			}
			var bCalls int
			for _, r := range srv.Requests() {
				if r.Model == "sim-b" {
					bCalls++
				}
			}
			if bCalls != 1 {
				t.Errorf("b's model got %d requests, want 1: a %d is not retried", bCalls, tc.status)
			}
			failed := rec.of(event.TypeAgentFailed)
			if len(failed) != 1 || failed[0].Agent != "b" {
				t.Fatalf("agent_failed events = %+v, want one for b", failed)
			}
			f := failed[0].Failure
			if f == nil || f.Kind != tc.kind || f.Status != tc.status || f.Provider != "sim" || f.Model != "sim-b" || f.Retryable {
				t.Errorf("failure = %+v, want kind %s, status %d, provider sim, model sim-b, not retryable", f, tc.kind, tc.status)
			}
			e, err := event.FromRecord(failed[0])
			if err != nil {
				t.Fatal(err)
			}
			line := event.Describe(e)
			for _, want := range []string{"b failed and left the run", "retrying cannot fix", fmt.Sprintf("HTTP %d", tc.status), "sim model sim-b"} {
				if !strings.Contains(line, want) {
					t.Errorf("progress line %q does not say %q", line, want)
				}
			}
			if n := len(rec.of(event.TypeTurnFailed)); n != 1 {
				t.Errorf("%d turn_failed events, want 1", n)
			}
		})
	}
}
