package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Issue 17: a body nested 100 000 deep is refused with a 400 that says
// why, before it is decoded; one at an ordinary depth is not.
func TestDeeplyNestedBodyIs400(t *testing.T) {
	f := start(t, setup{})
	post := func(path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx10(t), "POST", f.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	nested := func(n int) string {
		return `{"model": "massgen", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": ` +
			strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + `}}]}`
	}
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		body := nested(100_000)
		if path == "/v1/responses" {
			body = `{"model": "massgen", "input": "hi", "metadata": ` + strings.Repeat("[", 100_000) + "}"
		}
		status, resp := post(path, body)
		var e struct {
			Error struct{ Message, Code string }
		}
		_ = json.Unmarshal([]byte(resp), &e)
		if status != 400 || e.Error.Code != "invalid_json" || !strings.Contains(e.Error.Message, "nests deeper than 128 levels") {
			t.Errorf("%s: %d %.300s", path, status, resp)
		}
	}
	// 100 levels pass the check (and the request goes on to run).
	if status, resp := post("/v1/chat/completions", nested(100)); status != 200 {
		t.Errorf("100 levels: %d %.300s", status, resp)
	}
}
