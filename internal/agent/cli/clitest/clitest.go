// Package clitest finds the coding-agent CLIs that tests/cli-agents
// installs (pinned, with npm ci) for tests of CLI agents.
package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// Programs are the CLIs' programs by backend type.
var Programs = map[string]string{"claude_code": "claude", "codex": "codex", "gemini_cli": "gemini", "copilot": "copilot"}

// bin is tests/cli-agents/node_modules/.bin of this checkout.
func bin() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "tests", "cli-agents", "node_modules", ".bin")
}

// Program is the installed CLI of a backend type. Without it the test
// skips, or fails in CI (CI=true), where .ci/run installs it.
func Program(t testing.TB, typ string) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join(bin(), Programs[typ]))
	if _, err := os.Stat(p); err != nil {
		need(t, Programs[typ]+" is not installed (npm ci in tests/cli-agents)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		need(t, "node is not on PATH")
	}
	return p
}

// PATH is a search path with the CLIs of types first, then the system's
// directories, where npx, uvx and uv fail: a test must not fetch the MCP
// servers upstream's configs name from the package registries.
func PATH(t testing.TB, types ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, fetcher := range []string{"npx", "uvx", "uv"} {
		script := "#!/bin/sh\necho \"no package registry in tests\" >&2\nexit 1\n"
		if err := os.WriteFile(filepath.Join(dir, fetcher), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, typ := range types {
		if err := os.Symlink(Program(t, typ), filepath.Join(dir, Programs[typ])); err != nil {
			t.Fatal(err)
		}
	}
	return dir + ":/usr/local/bin:/usr/bin:/bin"
}

func need(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// Network is what massgen gives a sandboxed CLI agent whose network is
// limited (as internal/app does): each task's CLI runs under bubblewrap in
// g's view with home writable, in a network namespace of its own whose
// only ways out are the task's endpoints (sandbox.Net).
func Network(bwrap string, g *workspace.Guard, home string) func([]cli.Endpoint) (cli.Isolation, error) {
	return func(eps []cli.Endpoint) (cli.Isolation, error) {
		var in []sandbox.Endpoint
		for _, e := range eps {
			in = append(in, sandbox.Endpoint{URL: e.URL, Key: e.Key})
		}
		n, err := sandbox.NewNet(in)
		if err != nil {
			return cli.Isolation{}, err
		}
		var routes []cli.Endpoint
		for _, r := range n.Routes() {
			routes = append(routes, cli.Endpoint{URL: r.URL, Key: r.Key})
		}
		return cli.Isolation{Routes: routes, Release: func() { n.Close() }, Wrap: func(cmd *exec.Cmd, env []string) {
			sandbox.ProgramWith(bwrap, g, cmd, env, sandbox.ProgramOptions{Writable: []string{home}, Net: n})
		}}, nil
	}
}
