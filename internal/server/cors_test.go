package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/server"
)

func TestCORS(t *testing.T) {
	f := start(t, setup{deps: server.Deps{APIKey: "s3cret", CORSOrigins: []string{"https://app.example.com"}}})
	do := func(method, origin string, hdr map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx10(t), method, f.url+"/v1/chat/completions", strings.NewReader(
			`{"model":"massgen","messages":[{"role":"user","content":"q"}]}`))
		req.Header.Set("Origin", origin)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}

	// The preflight needs no key and says what the browser may send.
	pre := do(http.MethodOptions, "https://app.example.com", map[string]string{
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"})
	if pre.StatusCode != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		pre.Header.Get("Access-Control-Allow-Headers") != "authorization, content-type" {
		t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	// The request itself still needs the key, and carries the CORS headers.
	if r := do(http.MethodPost, "https://app.example.com", map[string]string{"Content-Type": "application/json"}); r.StatusCode != 401 ||
		r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("without key: %d %v", r.StatusCode, r.Header)
	}
	r := do(http.MethodPost, "https://app.example.com", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer s3cret"})
	if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		r.Header.Get("Access-Control-Expose-Headers") != "X-Massgen-Run-Id" {
		t.Errorf("with key: %d %v", r.StatusCode, r.Header)
	}
	// Another origin gets no CORS header (the browser blocks the page).
	if r := do(http.MethodOptions, "https://evil.example", map[string]string{"Access-Control-Request-Method": "POST"}); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin allowed: %v", r.Header)
	}

	// "*" allows any origin; without CORSOrigins there is no CORS at all.
	any := start(t, setup{deps: server.Deps{CORSOrigins: []string{"*"}}})
	req, _ := http.NewRequestWithContext(ctx10(t), http.MethodGet, any.url+"/v1/models", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	resp, err := any.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Errorf("'*': %v", resp.Header)
	}
	none := start(t, setup{})
	req, _ = http.NewRequestWithContext(ctx10(t), http.MethodGet, none.url+"/v1/models", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	if resp, err = none.hc.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS without origins configured: %v", resp.Header)
	}
}
