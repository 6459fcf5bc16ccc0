package cli

import (
	"bytes"
	"strings"
	"testing"
)

// --config - reads the config (JSON or YAML) from standard input: what the
// Python package's massgen.run(config_dict=…) sends. Its errors say
// <stdin>:LINE, and without a question (stdin is taken) it is refused.
func TestConfigFromStandardInput(t *testing.T) {
	run := func(stdin string, args ...string) result {
		t.Helper()
		dir := t.TempDir()
		var out, errb bytes.Buffer
		getenv := func(k string) string {
			if k == "HOME" {
				return dir
			}
			return ""
		}
		code := Run(t.Context(), args, Env{Getenv: getenv, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, WorkDir: dir})
		return result{code: code, stdout: out.String(), stderr: errb.String(), dir: dir}
	}
	team := `{"agents": [{"id": "alpha", "backend": {"type": "sim", "model": "sim-a"}},
	                     {"id": "beta", "backend": {"type": "sim", "model": "sim-b"}}]}`
	r := run(team, "--stream-events", "--no-logs", "--config", "-", "What is 2+2?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	lines := streamLines(t, r.stdout)
	var ids []string
	for _, a := range lines[0]["agents"].([]any) {
		ids = append(ids, a.(map[string]any)["id"].(string))
	}
	if strings.Join(ids, ",") != "alpha,beta" || lines[len(lines)-1]["status"] != "completed" {
		t.Errorf("team %v, finished %v", ids, lines[len(lines)-1])
	}

	bad := run("agents:\n  - id: a\n    backend: {type: sim, model: x}\n    bogus_key: 1\norchestrator:\n  voting_sensitivity: nope\n",
		"--no-logs", "--config", "-", "q")
	if bad.code != ExitConfig || !strings.Contains(bad.stderr, "<stdin>:6") {
		t.Errorf("bad config: exit %d, stderr %q; want exit %d naming <stdin>:6", bad.code, bad.stderr, ExitConfig)
	}
	for _, tc := range []struct{ stdin, want string }{
		{team, "question must be given"},
		{"", "standard input is empty"},
	} {
		args := []string{"--no-logs", "--config", "-"}
		if tc.want != "question must be given" {
			args = append(args, "q")
		}
		if r := run(tc.stdin, args...); r.code != ExitConfig || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("massgen %v: exit %d, stderr %q; want %q", args, r.code, r.stderr, tc.want)
		}
	}
}
