package main

import (
	"strings"
	"testing"
)

// The summary groups skips by what they need and says how to run them; a
// failed test's output is printed, a passing one's is not.
func TestSummary(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:12: server-everything not installed (npm ci in tests/mcp-npm): x\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: no Docker engine answers (x)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:3: reference configs not found at ../shared/x\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Test":"TestD","Output":"    d_test.go:3: the host has no non-loopback address\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestD"}`,
		`{"Action":"output","Package":"p","Test":"TestOK","Output":"    ok_test.go:3: chatter\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestOK"}`,
		`{"Action":"output","Package":"p","Test":"TestBad","Output":"    bad_test.go:9: got 1, want 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestBad"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
	}, "\n")
	var out strings.Builder
	summarize(strings.NewReader(in), &out)
	got := out.String()
	for _, want := range []string{
		"bad_test.go:9: got 1, want 2", "FAIL\tp\t0.1s",
		"Skipped: 4 tests.",
		"- 1 needs npm packages: run `npm ci` in tests/mcp-npm",
		"- 1 needs a Docker engine:",
		"- 1 needs data beside the repository",
		"1 × the host has no non-loopback address",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") || strings.Contains(got, "=== RUN") {
		t.Errorf("a passing or skipped test's output is printed:\n%s", got)
	}
}
