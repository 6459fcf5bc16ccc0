package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/massgen/massgen/internal/server"
)

// A web page can send a POST to 127.0.0.1 without a CORS preflight when
// its Content-Type is text/plain, a form's or none, and a DNS-rebound page
// can send anything under its own name in Host. Neither may start a run.

// countingRunner answers every run at once and counts them.
type countingRunner struct{ n atomic.Int32 }

func (c *countingRunner) run(context.Context, server.RunRequest) (*server.RunResult, error) {
	c.n.Add(1)
	return &server.RunResult{Status: "completed", Final: "ok", Winner: "a"}, nil
}

// send makes one request with the given Host (empty: the server's own
// address) and headers, and returns its status and decoded error body.
func send(t *testing.T, f *fixture, method, path, host string, hdr map[string]string, body string) (int, http.Header, errorJSON) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx10(t), method, f.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e errorJSON
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
			t.Errorf("%s %s: %d body %s is not an OpenAI error", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, resp.Header, e
}

type errorJSON struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func (e errorJSON) code() string {
	if e.Error.Code == nil {
		return ""
	}
	return *e.Error.Code
}

const question = `{"model":"massgen","messages":[{"role":"user","content":"q"}]}`
const responsesQuestion = `{"model":"massgen","input":"q"}`

func TestNonJSONContentTypesAreRefusedWith415AndStartNoRun(t *testing.T) {
	for _, key := range []string{"", "s3cret"} {
		var c countingRunner
		f := start(t, setup{deps: server.Deps{Run: c.run, APIKey: key}})
		for _, route := range []struct{ path, body string }{
			{"/v1/chat/completions", question}, {"/v1/responses", responsesQuestion},
		} {
			// What a page can send without a preflight: a form, plain
			// text, or a Blob with no type at all.
			for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
				"multipart/form-data; boundary=x", "", "application/jsonx", "not a media type"} {
				hdr := map[string]string{"Content-Type": ct, "Origin": "https://evil.example"}
				if key != "" {
					hdr["Authorization"] = "Bearer " + key // even with the key: defence in depth
				}
				status, h, e := send(t, f, http.MethodPost, route.path, "", hdr, route.body)
				if status != http.StatusUnsupportedMediaType || e.code() != "unsupported_media_type" ||
					e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, "application/json") {
					t.Errorf("key %q %s Content-Type %q: %d %+v, want 415 unsupported_media_type", key, route.path, ct, status, e)
				}
				if h.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("CORS is on by default: %v", h)
				}
			}
		}
		if n := c.n.Load(); n != 0 {
			t.Fatalf("key %q: refused requests started %d runs", key, n)
		}
		// JSON, with or without parameters, in any case, still runs.
		// JSON with a malformed parameter is still JSON.
		for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON", "application/json;", "application/json; charset"} {
			hdr := map[string]string{"Content-Type": ct, "Authorization": "Bearer " + key}
			if status, _, e := send(t, f, http.MethodPost, "/v1/chat/completions", "", hdr, question); status != 200 {
				t.Errorf("Content-Type %q: %d %+v", ct, status, e)
			}
		}
		if n := c.n.Load(); n != 5 {
			t.Errorf("JSON requests started %d runs, want 5", n)
		}
	}
}

func TestForeignHostIsRefusedOnEveryRouteAndStartsNoRun(t *testing.T) {
	for _, key := range []string{"", "s3cret"} {
		var c countingRunner
		f := start(t, setup{deps: server.Deps{Run: c.run, APIKey: key}})
		hdr := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + key}
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(f.url, "http://"))
		// A rebound name reaches the server with the attacker's name in
		// Host, on the server's port or on another.
		for _, host := range []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port, "127.0.0.1.evil.example"} {
			for _, rq := range []struct{ method, path, body string }{
				{http.MethodPost, "/v1/chat/completions", question}, {http.MethodPost, "/v1/responses", responsesQuestion},
				{http.MethodGet, "/v1/runs/0123456789abcdef", ""}, {http.MethodGet, "/v1/models", ""},
				{http.MethodGet, "/v1/models/massgen", ""}, {http.MethodGet, "/health", ""},
				{http.MethodOptions, "/v1/chat/completions", ""},
			} {
				status, _, e := send(t, f, rq.method, rq.path, host, hdr, rq.body)
				if status != http.StatusForbidden || e.code() != "host_not_allowed" || !strings.Contains(e.Error.Message, "--allowed-hosts") {
					t.Errorf("key %q Host %s %s %s: %d %+v, want 403 host_not_allowed", key, host, rq.method, rq.path, status, e)
				}
			}
		}
		if n := c.n.Load(); n != 0 {
			t.Fatalf("key %q: refused requests started %d runs", key, n)
		}
		// The loopback names, with or without a port, in any case, still work.
		for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "localhost.:" + port, "[::1]:" + port, "localhost", "127.0.0.1"} {
			if status, _, e := send(t, f, http.MethodPost, "/v1/chat/completions", host, hdr, question); status != 200 {
				t.Errorf("Host %s: %d %+v", host, status, e)
			}
		}
		if n := c.n.Load(); n != 7 {
			t.Errorf("allowed requests started %d runs, want 7", n)
		}
	}
}

func TestAllowedHostsLetAProxysNameThrough(t *testing.T) {
	var c countingRunner
	f := start(t, setup{deps: server.Deps{Run: c.run, AllowedHosts: []string{"massgen.example.com", " API.Internal "}}})
	hdr := map[string]string{"Content-Type": "application/json"}
	for host, want := range map[string]int{
		"massgen.example.com": 200, "massgen.example.com:443": 200, "api.internal": 200, "localhost": 200,
		"evil.example": 403, "sub.massgen.example.com": 403,
	} {
		if status, _, e := send(t, f, http.MethodPost, "/v1/chat/completions", host, hdr, question); status != want {
			t.Errorf("Host %s: %d %+v, want %d", host, status, e, want)
		}
	}
	// "*" turns the check off.
	any := start(t, setup{deps: server.Deps{Run: c.run, AllowedHosts: []string{"*"}}})
	if status, _, e := send(t, any, http.MethodGet, "/v1/models", "evil.example", nil, ""); status != 200 {
		t.Errorf("'*': %d %+v", status, e)
	}
}

func TestListeningBeyondLoopbackAcceptsTheMachinesNames(t *testing.T) {
	name, err := os.Hostname()
	if err != nil || name == "" || strings.EqualFold(name, "localhost") {
		t.Skipf("no host name of its own: %q %v", name, err)
	}
	var c countingRunner
	// The test server listens on 127.0.0.1, but the Host check follows
	// ListenHost: what `massgen serve --host 0.0.0.0` passes.
	for _, listen := range []string{"0.0.0.0", "::", ""} {
		f := start(t, setup{deps: server.Deps{Run: c.run, ListenHost: listen}})
		want := map[string]int{"localhost": 200, "evil.example": 403}
		if listen != "" {
			want[name+":4000"] = 200
			want[strings.ToUpper(name)] = 200
			want["192.0.2.7:4000"] = 200 // an address reached through NAT: an IP cannot be rebound
			want["[2001:db8::1]:4000"] = 200
		} else {
			want[name] = 403
			want["192.0.2.7:4000"] = 403
		}
		for host, w := range want {
			if status, _, e := send(t, f, http.MethodGet, "/v1/models", host, nil, ""); status != w {
				t.Errorf("listening on %q, Host %s: %d %+v, want %d", listen, host, status, e, w)
			}
		}
	}
	// A named listen address is accepted as itself.
	f := start(t, setup{deps: server.Deps{Run: c.run, ListenHost: "massgen.lan"}})
	if status, _, e := send(t, f, http.MethodGet, "/v1/models", "massgen.lan:4000", nil, ""); status != 200 {
		t.Errorf("named listen host: %d %+v", status, e)
	}
}

func TestCORSIsOffByDefault(t *testing.T) {
	var c countingRunner
	f := start(t, setup{deps: server.Deps{Run: c.run}})
	origin := map[string]string{"Origin": "https://evil.example", "Content-Type": "application/json"}
	pre := map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "content-type"}
	for _, rq := range []struct {
		method, path, body string
		hdr                map[string]string
	}{
		{http.MethodOptions, "/v1/chat/completions", "", pre},
		{http.MethodPost, "/v1/chat/completions", question, origin},
		{http.MethodGet, "/v1/models", "", origin},
		{http.MethodGet, "/health", "", origin},
	} {
		_, h, _ := send(t, f, rq.method, rq.path, "", rq.hdr, rq.body)
		for k := range h {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("%s %s without --cors-origins: header %s: %v", rq.method, rq.path, k, h.Values(k))
			}
		}
	}
}
