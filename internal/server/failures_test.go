package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// A run whose agents all fail is answered with an error whose body says
// why each agent left, as data: kind, agent, provider, model, status.
func TestAFailedRunsErrorCarriesEachAgentsFailure(t *testing.T) {
	_, url := simtest.Start(t, "models:\n  bad: {always: {fault: \"401\", text: \"invalid api key\"}}\n")
	f := start(t, setup{configs: map[string]string{"bad.yaml": team(url, "bad", "bad")}})
	body := `{"model":"massgen/bad","messages":[{"role":"user","content":"q"}]}`
	req, _ := http.NewRequestWithContext(ctx10(t), http.MethodPost, f.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct {
			Code     string
			Failures []coord.Failure
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusInternalServerError || e.Error.Code != "run_failed" {
		t.Fatalf("status %d, code %q; want 500 run_failed", resp.StatusCode, e.Error.Code)
	}
	if len(e.Error.Failures) != 2 {
		t.Fatalf("failures %+v, want one per agent", e.Error.Failures)
	}
	for i, got := range e.Error.Failures {
		if got.Kind != coord.FailAuth || got.Status != 401 || got.Model != "bad" || got.Retryable || got.Agent != []string{"agent_1", "agent_2"}[i] ||
			!strings.Contains(got.Message, "invalid api key") {
			t.Errorf("failure %d: %+v, want agent_%d's 401 from model bad, as auth", i, got, i+1)
		}
	}
}
