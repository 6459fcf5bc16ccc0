package redact

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestShapesAreMasked(t *testing.T) {
	cases := []struct{ in, secret, want string }{
		{"Incorrect API key provided: sk-abcdefghijklmnop1234", "abcdefghijklmnop1234", "Incorrect API key provided: sk-…[redacted]"},
		{"key sk-proj-AbCdEf0123456789_xyz is bad", "AbCdEf0123456789_xyz", "key sk-proj-…[redacted] is bad"},
		{"invalid x-api-key sk-ant-api03-abcdefghijklmn", "api03-abcdefghijklmn", "invalid x-api-key sk-ant-…[redacted]"},
		{"sk-or-v1-0123456789abcdef0123", "0123456789abcdef0123", "sk-or-…[redacted]"},
		{"?key=AIzaSyA-0123456789abcdefghijklmnopqrstu", "SyA-0123456789abcdefghijklmnopqrstu", "?key=AIza…[redacted]"},
		{"xai-ABCDEFGHIJ0123456789", "ABCDEFGHIJ0123456789", "xai-…[redacted]"},
		{"gsk_ABCDEFGHIJ0123456789xyz", "ABCDEFGHIJ0123456789xyz", "gsk_…[redacted]"},
		{"AKIAIOSFODNN7EXAMPLE here", "IOSFODNN7EXAMPLE", "AKIA…[redacted] here"},
		{"ghp_0123456789abcdefghijABCDEFGHIJ", "0123456789abcdefghij", "ghp_…[redacted]"},
		{"github_pat_11ABCDEFG0123456789_abcdefghij", "11ABCDEFG0123456789", "github_pat_…[redacted]"},
		{"you sent Bearer eyJhbGciOi.J9.x-y_z", "eyJhbGciOi", "you sent Bearer …[redacted]"},
		{"Authorization: Bearer mytokenvalue", "mytokenvalue", "Authorization: Bearer …[redacted]"},
		{`{"authorization":"Basic dXNlcjpwYXNz"}`, "dXNlcjpwYXNz", `{"authorization":"Basic …[redacted]"}`},
		{"x-api-key: plainsecretvalue", "plainsecretvalue", "x-api-key: …[redacted]"},
		{`{"api_key": "abc123def456ghi"}`, "abc123def456ghi", `{"api_key": "…[redacted]"}`},
		{"url?api_key=zz99zz99zz99&x=1", "zz99zz99zz99", "url?api_key=…[redacted]&x=1"},
	}
	for _, c := range cases {
		got := String(c.in)
		if strings.Contains(got, c.secret) || got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestOrdinaryTextIsKept(t *testing.T) {
	for _, s := range []string{
		"",
		"agent a: openai model gpt-4o: HTTP 401: invalid api key",
		"api_key refers to OPENAI_API_KEY, which is not set",
		"api_key: expected a string",
		`api_key: "${OPENAI_API_KEY}"`,
		"the sk-learn library; task-oriented work",
		"Bearer token missing",
		"rate limited: retry after 20s",
	} {
		if got := String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestRegisteredSecretsAreMaskedWhereverTheyAppear(t *testing.T) {
	Secret("short", "", "  ")             // too short: ignored
	Secret("plainKEYwithoutShape42")      // no vendor shape at all
	Secret("vendor_ZZZZZZZZZZZZZZZZZZZZ") // a prefix stays
	Secret("plainKEYwithoutShape42")      // twice: once
	got := String(`echo: plainKEYwithoutShape42 and {"k":"vendor_ZZZZZZZZZZZZZZZZZZZZ"} short`)
	want := `echo: …[redacted] and {"k":"vendor_…[redacted]"} short`
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	secrets.RLock()
	n := len(secrets.list)
	secrets.RUnlock()
	if n != 2 {
		t.Errorf("%d secrets registered, want 2", n)
	}
	if got := Error(errors.New("HTTP 401: plainKEYwithoutShape42")); got != "HTTP 401: …[redacted]" {
		t.Errorf("Error = %q", got)
	}
	if Error(nil) != "" {
		t.Error("Error(nil) is not empty")
	}
}

func TestCarrierAroundARegisteredKeyIsMaskedOnce(t *testing.T) {
	Secret("sk-test-LEAKCANARY0123456789abcdef")
	got := String(`{"error":{"message":"Invalid key in header Authorization: Bearer sk-test-LEAKCANARY0123456789abcdef"}}`)
	want := `{"error":{"message":"Invalid key in header Authorization: Bearer sk-…[redacted]"}}`
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestSecretVariablesAreRegisteredByName(t *testing.T) {
	Environ([]string{
		"GITHUB_TOKEN=tok-envvar-0001",
		"AWS_SECRET_ACCESS_KEY=aws/envvar/0002",
		"DB_PASSWORD=pw-envvar-0003",
		"HOME=/home/someone-0004",
		"SSH_AUTH_SOCK=/run/agent.sock-0005",
		"MONKEYS=bananas-envvar-0006",
		"broken",
	})
	SecretVar("MY_API_KEY", "fromdotenv-0007")
	got := String("tok-envvar-0001 aws/envvar/0002 pw-envvar-0003 /home/someone-0004 /run/agent.sock-0005 bananas-envvar-0006 fromdotenv-0007")
	want := "tok-…[redacted] …[redacted] pw-…[redacted] /home/someone-0004 /run/agent.sock-0005 bananas-envvar-0006 …[redacted]"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestMaskedKeepsTheChainAndHidesTheText(t *testing.T) {
	Secret("zz-masked-secret-0123456789")
	base := fmt.Errorf("server said zz-masked-secret-0123456789: %w", io.EOF)
	err := Masked(base)
	if strings.Contains(err.Error(), "0123456789") || !errors.Is(err, io.EOF) {
		t.Errorf("Masked = %q (Is EOF: %v)", err, errors.Is(err, io.EOF))
	}
	if Masked(nil) != nil {
		t.Error("Masked(nil) is not nil")
	}
}

// Registered masks the registered secrets only: a key-shaped token it was
// not told of stays, as a command's output may be code.
func TestRegisteredLeavesShapes(t *testing.T) {
	Secret("reg-only-secret-4242")
	in := "key=reg-only-secret-4242 Authorization: Bearer abcdefghijklmnop1234 sk-proj-abcdefghijklmnopqrstuv12"
	got := Registered(in)
	want := "key=reg-only-secret-4242 Authorization: Bearer abcdefghijklmnop1234 sk-proj-abcdefghijklmnopqrstuv12"
	want = strings.Replace(want, "reg-only-secret-4242", "reg-"+Mark, 1)
	if got != want {
		t.Errorf("Registered:\n got %q\nwant %q", got, want)
	}
	if s := String(in); strings.Contains(s, "abcdefghijklmnopqrstuv12") || strings.Contains(s, "reg-only-secret-4242") {
		t.Errorf("String keeps a key: %q", s)
	}
}
