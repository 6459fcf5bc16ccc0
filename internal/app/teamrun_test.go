package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runFrom runs req from the working directory work with the environment
// vars (nil: none) and returns the run and what it wrote on stderr; a run
// that does not start fails the test (with the team's YAML, when req
// carries it).
func runFrom(t *testing.T, work string, vars map[string]string, req Request) (*Outcome, string) {
	t.Helper()
	var stderr bytes.Buffer
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: work}
	out, err := Execute(t.Context(), env, req)
	if err != nil {
		t.Fatalf("did not start: %v\n%s", err, req.Team.ConfigYAML)
	}
	return out, stderr.String()
}

// runYAML runs the team in yaml (simulated agents: no environment) from
// work, asking question within timeout seconds, with its logs in
// work/logs.
func runYAML(t *testing.T, work, question, yaml string, timeout float64) (*Outcome, string) {
	t.Helper()
	return runFrom(t, work, nil, Request{Question: question, Team: Team{ConfigYAML: []byte(yaml)},
		Overrides: Overrides{Timeout: timeout}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
}

// runConfigFile writes the team cfg (simulated agents: no environment)
// as dir/c.yaml and runs it from dir, asking "q" within 120 seconds.
func runConfigFile(t *testing.T, dir, cfg string) (*Outcome, string) {
	t.Helper()
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cfg), 0o644))
	return runFrom(t, dir, nil, Request{Question: "q", Team: Team{Config: filepath.Join(dir, "c.yaml")}, Overrides: Overrides{Timeout: 120}})
}

// wantWinner fails the test, with the run's logs, unless the run
// completed with agent winner's answer.
func wantWinner(t *testing.T, out *Outcome, stderr, winner string) {
	t.Helper()
	if out.Status != "completed" || out.Winner != winner {
		logRun(t, out.LogDir)
		t.Fatalf("status %s, winner %q, err %v; stderr:\n%s", out.Status, out.Winner, out.Err, stderr)
	}
}

// wantFinal fails the test unless the run completed, with no agent's turn
// failed, and its final answer holds final.
func wantFinal(t *testing.T, out *Outcome, stderr, final string) {
	t.Helper()
	if out.Status != "completed" || !strings.Contains(out.Final, final) || len(out.Failures) > 0 {
		t.Fatalf("status %s, final %q, failures %v, err %v\n%s", out.Status, out.Final, out.Failures, out.Err, stderr)
	}
}
