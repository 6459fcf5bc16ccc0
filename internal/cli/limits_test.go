package cli

import (
	"strings"
	"testing"
)

// Issue 18: a seconds flag takes a finite positive number of at most a
// year. 1e10 used to overflow time.Duration into a deadline in the past
// (the run ended at once) and NaN meant no deadline at all; both are now
// usage errors that name the flag, before anything runs. The interactive
// session (no question) takes the flag too and is checked the same way.
func TestSecondsFlagsRefuseWhatIsNotADuration(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--orchestrator-timeout", "1e10", "--config", "@examples/sim_single_agent", "q"},
			"--orchestrator-timeout must be at most 31536000 seconds (a year), got 1e+10"},
		{[]string{"--orchestrator-timeout", "NaN", "--config", "@examples/sim_single_agent", "q"},
			"--orchestrator-timeout must be a finite number of seconds, got NaN"},
		{[]string{"--orchestrator-timeout", "+Inf", "--config", "@examples/sim_single_agent", "q"},
			"--orchestrator-timeout must be a finite number of seconds, got +Inf"},
		{[]string{"--orchestrator-timeout", "-5", "--config", "@examples/sim_single_agent", "q"},
			"--orchestrator-timeout must be a positive number of seconds, got -5"},
		{[]string{"--orchestrator-timeout", "NaN", "--config", "@examples/sim_single_agent"},
			"--orchestrator-timeout must be a finite number of seconds, got NaN"},
		{[]string{"serve", "--shutdown-grace", "NaN", "--port", "0"},
			"--shutdown-grace must be a finite number of seconds, got NaN"},
		{[]string{"serve", "--shutdown-grace", "1e10", "--port", "0"},
			"--shutdown-grace must be at most 31536000 seconds (a year)"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := massgen(t, t.Context(), nil, nil, c.args...)
			if r.code != ExitConfig || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", r.code, ExitConfig, c.want, r.stderr)
			}
		})
	}
}

// The same value in a config is refused at its line, with the fix.
func TestConfigTimeoutPastAYearIsAConfigError(t *testing.T) {
	r := massgen(t, t.Context(), map[string]string{
		"c.yaml": "agent: {id: a, backend: {type: sim}}\ntimeout_settings:\n  orchestrator_timeout_seconds: 10000000000\n"},
		nil, "--config", "c.yaml", "q")
	want := "c.yaml:3:33: timeout_settings.orchestrator_timeout_seconds: must be at most 31536000 seconds (a year), got 1e+10"
	if r.code != ExitConfig || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "e.g. 1800") {
		t.Fatalf("exit %d, want %d with %q and a suggestion:\n%s", r.code, ExitConfig, want, r.stderr)
	}
}

// Issue 18: with the grace unset, a short deadline is extended by at most
// itself (it was 60 s past a 5 s deadline). The note names the grace the
// run applied, here the deadline the flag set.
func TestUnsetGraceIsBoundedByTheFlagsDeadline(t *testing.T) {
	files := map[string]string{
		"c.yaml": "agents:\n  - {id: a, backend: {type: sim, model: sim-a, scenario: s.yaml}}\n  - {id: b, backend: {type: sim, model: sim-b, scenario: s.yaml}}\n",
		"s.yaml": hungPresentation["s.yaml"],
	}
	r := massgen(t, t.Context(), files, nil, "--no-logs", "--orchestrator-timeout", "1.5", "--config", "c.yaml", "q")
	want := "note: the presentation did not finish by the run deadline plus the presentation grace (1.5s)"
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, want 0 and %q:\n%s", r.code, want, r.stderr)
	}
}
