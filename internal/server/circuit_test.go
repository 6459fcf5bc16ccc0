package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestARunHeldBackByAnOpenCircuitIs503WithRetryAfter(t *testing.T) {
	// The provider fails every request, asking for a 1ms wait: the agent's
	// turns fail fast until its failure budget is spent, and by then its
	// model's circuit breaker is open.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0.001")
		http.Error(w, `{"error":{"message":"upstream exploded"}}`, http.StatusInternalServerError)
	}))
	defer up.Close()
	f := start(t, setup{configs: map[string]string{"down.yaml": team(up.URL, "broken")}})
	body := `{"model":"massgen/down","messages":[{"role":"user","content":"q"}]}`
	req, _ := http.NewRequestWithContext(ctx10(t), http.MethodPost, f.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Code != "circuit_open" {
		t.Fatalf("status %d, error %+v; want 503 circuit_open", resp.StatusCode, e.Error)
	}
	// The default cooldown is 30s, and some of it has passed.
	if after, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || after < 1 || after > 30 {
		t.Errorf("Retry-After = %q, want the whole seconds until the breaker's trial (1..30)", resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(e.Error.Message, "upstream exploded") || !strings.Contains(e.Error.Message, "circuit open") {
		t.Errorf("message %q; want the provider's failure and the open circuit", e.Error.Message)
	}
}
