package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// upstream073Flags are the top-level flags of MassGen v0.1.73's
// `massgen --help` (massgen/cli.py main_parser and its mode flags), each
// with whether it takes a value.
var upstream073Flags = map[string]bool{
	"config": true, "select": false, "backend": true, "model": true, "system-message": true, "base-url": true,
	"no-display": false, "display": true, "textual-serve": false, "textual-serve-port": true, "no-logs": false,
	"debug": false, "save-streaming-buffers": false, "logfire": false, "web": false, "web-quickstart": false,
	"web-port": true, "web-host": true, "no-browser": false, "web-review": false, "automation": false, "step": false,
	"session-dir": true, "stream-events": false, "plan": false, "cwd-context": true, "plan-depth": true,
	"plan-thoroughness": true, "plan-steps": true, "plan-chunks": true, "broadcast": true, "plan-and-execute": false,
	"execute-plan": true, "spec": false, "execute-spec": true, "no-session-registry": false,
	"no-parse-at-references": false, "eval-criteria": true, "checklist-criteria-preset": true, "output-file": true,
	"skip-agent-selector": false, "init": false, "quickstart": false, "headless": false, "generate-config": true,
	"config-agents": true, "config-backend": true, "config-model": true, "config-agent-id": true,
	"config-docker": false, "config-context-path": true, "quickstart-agent": true, "setup": false,
	"setup-skills": false, "setup-docker": false, "list-backends": false, "list-examples": false, "example": true,
	"show-schema": false, "schema-backend": true, "with-examples": false, "validate": true, "strict": false,
	"json": false, "skip-validation": false, "strict-validation": false, "session-id": true, "continue": false,
	"list-sessions": false, "all": false, "orchestrator-timeout": true, "rate-limit": false,
	"single-agent": false, "coordination-mode": true, "quick": false, "personas": true,
}

// Every flag of v0.1.73's massgen is one massgen knows — its own, one
// mapped to a command, or one that says what to use instead — so none is
// ever a bare "unknown flag".
func TestEveryV073FlagIsKnown(t *testing.T) {
	root := newRoot(t.Context(), &Env{}, nil)
	for name, value := range upstream073Flags {
		f := root.Flags().Lookup(name)
		if f == nil {
			if got := upstreamCommand([]string{"--" + name}); len(got) == 0 || got[0] == "--"+name {
				t.Errorf("--%s is unknown", name)
			}
			continue
		}
		if takes := f.Value.Type() != "bool" && f.NoOptDefVal == ""; takes != value {
			t.Errorf("--%s takes a value: %v here, %v upstream", name, takes, value)
		}
	}
}

const twoSimAgents = `agents:
  - id: first
    backend: {type: sim, model: sim-first}
  - id: second
    backend: {type: sim, model: sim-second}
`

// --single-agent runs one agent of the team: the first, or the one named
// (=ID, or the word before the question, as upstream reads it).
func TestSingleAgentFlag(t *testing.T) {
	files := map[string]string{"c.yaml": twoSimAgents}
	for _, tc := range []struct {
		args   []string
		winner string
	}{
		{[]string{"--single-agent", "q"}, "first"},
		{[]string{"--single-agent=second", "q"}, "second"},
		{[]string{"--single-agent", "second", "q"}, "second"},
	} {
		r := massgen(t, t.Context(), files, nil, append([]string{"--automation", "--config", "c.yaml"}, tc.args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "WINNER: "+tc.winner+"\n") {
			t.Errorf("%q: exit %d, want winner %s\n%s%s", tc.args, r.code, tc.winner, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "WINNER: first") && strings.Contains(r.stdout, "second") {
			t.Errorf("%q: both agents ran:\n%s", tc.args, r.stdout)
		}
	}
	r := massgen(t, t.Context(), files, nil, "--config", "c.yaml", "--single-agent=nobody", "q")
	if r.code != ExitConfig || !strings.Contains(r.stderr, "--single-agent nobody: the team has no such agent; its agents are first, second") {
		t.Errorf("an unknown agent: exit %d\n%s", r.code, r.stderr)
	}
}

// --quick: each agent answers once and the winning answer is final.
func TestQuickFlag(t *testing.T) {
	r := massgen(t, t.Context(), map[string]string{"c.yaml": twoSimAgents}, nil, "--automation", "--quick", "--config", "c.yaml", "q")
	if r.code != 0 || !strings.Contains(r.stdout, "RESULT: completed") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The mode flags massgen cannot honour, and the plan and spec flags, stop
// the run with what to use instead; their "off" values run as usual.
func TestModeAndPlanFlagsSayWhatToUseInstead(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--coordination-mode", "decomposition", "--personas", "perspective"}, "--personas requires parallel coordination mode, not decomposition"},
		{[]string{"--coordination-mode", "voting-ish"}, "--coordination-mode takes parallel or decomposition"},
		{[]string{"--personas", "loud"}, "--personas takes off, perspective, implementation or methodology"},
		{[]string{"--plan", "--spec"}, "one mode each: give one"},
		{[]string{"--plan-depth", "deep"}, "--plan-depth goes with --plan or --plan-and-execute"},
		{[]string{"--plan", "--plan-depth", "huge"}, "--plan-depth takes dynamic, shallow, medium, deep"},
		{[]string{"--spec", "--plan-steps", "9"}, "--plan-steps goes with --plan"},
		{[]string{"--plan"}, "plan mode needs agents with a workspace (a cwd in the config)"},
		{[]string{"--execute-plan", "latest"}, "no stored plan in"},
		{[]string{"--execute-spec", "nope"}, "nope is not a stored plan"},
		{[]string{"--broadcast", "human"}, "--broadcast human: broadcast (agents asking you or each other questions during a run) is not available yet"},
		{[]string{"--broadcast", "loud"}, "--broadcast takes human, agents or false"},
	} {
		r := massgen(t, t.Context(), nil, nil, append(tc.args, "--config", "@examples/sim_single_agent", "q")...)
		if r.code != ExitConfig || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "unknown flag") {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	for _, args := range [][]string{{"--coordination-mode", "parallel"}, {"--personas", "off"}} {
		r := massgen(t, t.Context(), nil, nil, append(args, "--automation", "--config", "@examples/sim_single_agent", "q")...)
		if r.code != 0 {
			t.Errorf("%q: exit %d\n%s", args, r.code, r.stderr)
		}
	}
}

// Upstream's --quickstart --config NAME writes .massgen/NAME.yaml, and
// with --headless (no questions, no run) the exact path given: --config
// is never an unknown flag of the quickstart command.
func TestQuickstartTakesUpstreamsConfigAndHeadless(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--quickstart", "--headless", "--backend", "sim", "--config", "team/out.yaml")
	if r.code != 0 {
		t.Fatalf("--quickstart --headless --config: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "team", "out.yaml")); err != nil {
		t.Errorf("the exact path was not written: %v", err)
	}
	r = massgen(t, t.Context(), nil, nil, "--quickstart", "--yes", "--no-run", "--backend", "sim", "--config", "mine")
	if r.code != 0 {
		t.Fatalf("--quickstart --config NAME: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(r.dir, ".massgen", "mine.yaml")); err != nil {
		t.Errorf(".massgen/mine.yaml was not written: %v", err)
	}
	r = massgen(t, t.Context(), nil, nil, "--quickstart", "--yes", "--no-run", "--backend", "sim", "--config", "a", "--output", "b.yaml")
	if r.code != ExitConfig || strings.Contains(r.stderr, "unknown flag") {
		t.Errorf("--config with --output: exit %d\n%s", r.code, r.stderr)
	}
}
