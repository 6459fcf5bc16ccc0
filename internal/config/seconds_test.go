package config

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/coord"
)

// Issue 18: every seconds-valued key refuses NaN, the infinities,
// negatives and values a time.Duration cannot hold (1e10 seconds wrapped
// into a deadline in the past and ended the run at once; NaN passed for
// no deadline at all), at the value's line, naming the key.
func TestSecondsKeysRefuseValuesThatCannotBeADuration(t *testing.T) {
	keys := []struct {
		key  string // as reported
		yaml func(v string) string
		line int
	}{
		{"timeout_settings.orchestrator_timeout_seconds", func(v string) string {
			return oneAgent + "timeout_settings:\n  orchestrator_timeout_seconds: " + v + "\n"
		}, 5},
		{"timeout_settings.agent_turn_timeout_seconds", func(v string) string {
			return oneAgent + "timeout_settings:\n  agent_turn_timeout_seconds: " + v + "\n"
		}, 5},
		{"timeout_settings.presentation_grace_seconds", func(v string) string {
			return oneAgent + "timeout_settings:\n  presentation_grace_seconds: " + v + "\n"
		}, 5},
		{"timeout_settings.stream_idle_timeout_seconds", func(v string) string {
			return oneAgent + "timeout_settings:\n  stream_idle_timeout_seconds: " + v + "\n"
		}, 5},
		{"orchestrator.timeout.orchestrator_timeout_seconds", func(v string) string {
			return oneAgent + "orchestrator:\n  timeout:\n    orchestrator_timeout_seconds: " + v + "\n"
		}, 6},
		{"orchestrator.agent_turn_timeout_seconds", func(v string) string {
			return oneAgent + "orchestrator:\n  agent_turn_timeout_seconds: " + v + "\n"
		}, 5},
		{"agents[0].backend.mcp_servers[0].timeout", func(v string) string {
			return "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      mcp_servers:\n        - {name: fs, command: x, timeout: " + v + "}\n"
		}, 7},
		{"agents[0].backend.mcp_servers[0].init_timeout", func(v string) string {
			return "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      mcp_servers:\n        - {name: fs, command: x, init_timeout: " + v + "}\n"
		}, 7},
		{"agents[0].backend.mcp_servers[0].http_read_timeout", func(v string) string {
			return "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      mcp_servers:\n        - {name: fs, command: x, http_read_timeout: " + v + "}\n"
		}, 7},
		{"agents[0].backend.custom_tools[0].timeout", func(v string) string {
			return "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      custom_tools:\n        - {name: t, type: command, command: x, timeout: " + v + "}\n"
		}, 7},
	}
	values := []struct{ yaml, want string }{
		{".nan", "must be a finite number of seconds, got NaN"},
		{".inf", "must be a finite number of seconds, got +Inf"},
		{"-.inf", "must be a finite number of seconds, got -Inf"},
		{"-5", "must be a positive number of seconds, got -5"},
		{"0", "must be a positive number of seconds, got 0"},
		{"1.0e10", "must be at most 31536000 seconds (a year), got 1e+10"},
		{"10000000000", "must be at most 31536000 seconds (a year), got 1e+10"},
		{"9223372037", "must be at most 31536000 seconds (a year), got 9.223372037e+09"},
	}
	for _, k := range keys {
		for _, v := range values {
			t.Run(k.key+"="+v.yaml, func(t *testing.T) {
				ds := diagnose(t, k.yaml(v.yaml), nil)
				d, ok := find(ds, k.key, Error)
				if !ok {
					t.Fatalf("no error for %s: %s; got%s", k.key, v.yaml, dump(ds))
				}
				if !strings.Contains(d.Message, v.want) || d.Line != k.line || d.File != "test.yaml" {
					t.Errorf("got %s\nwant test.yaml:%d: … %s", d, k.line, v.want)
				}
				if d.Suggestion == "" {
					t.Errorf("no suggestion: %s", d)
				}
				if n := len(ds.Errors()); n != 1 {
					t.Errorf("one mistake, %d errors:%s", n, dump(ds))
				}
			})
		}
		t.Run(k.key+"=a year", func(t *testing.T) {
			if ds := diagnose(t, k.yaml("31536000"), nil); ds.HasErrors() {
				t.Errorf("a year is allowed:%s", dump(ds))
			}
		})
	}
}

// The limit holds where a config is built in code (the Go API), where
// only Validate and Settings see the values.
func TestSettingsRefusesSecondsThatCannotBeADuration(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), -1, 1e10} {
		c := New()
		c.Agents = []Agent{{ID: "a", Backend: Backend{Type: "sim"}}}
		c.Orchestrator.TimeoutSeconds = v
		c.Orchestrator.PresentationGraceSeconds = v
		if _, err := c.Settings(); err == nil || !strings.Contains(err.Error(), "orchestrator_timeout_seconds") ||
			!strings.Contains(err.Error(), "presentation_grace_seconds") {
			t.Errorf("Settings with %g: err = %v, want both keys named", v, err)
		}
		ds := c.Validate()
		for _, key := range []string{"timeout_settings.orchestrator_timeout_seconds", "timeout_settings.presentation_grace_seconds"} {
			if _, ok := find(ds, key, Error); !ok {
				t.Errorf("Validate with %g: no error for %s:%s", v, key, dump(ds))
			}
		}
	}
	c := New()
	c.Orchestrator.TimeoutSeconds = MaxSeconds
	s, err := c.Settings()
	if err != nil || s.Timeout != MaxSeconds*time.Second {
		t.Errorf("a year: %v, %v", s.Timeout, err)
	}
	if dl := time.Now().Add(s.Timeout + s.PresentationGrace + s.TurnTimeout); !dl.After(time.Now()) {
		t.Errorf("a year's deadline plus its grace wraps around: %v", dl)
	}
}

func TestSecondsNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{math.NaN(), "--orchestrator-timeout must be a finite number of seconds, got NaN"},
		{1e10, "--orchestrator-timeout must be at most 31536000 seconds (a year), got 1e+10"},
		{-3, "--orchestrator-timeout must be a positive number of seconds, got -3"},
		{0, "--orchestrator-timeout must be a positive number of seconds, got 0"},
	} {
		if _, err := Seconds("--orchestrator-timeout", c.v); err == nil || err.Error() != c.want {
			t.Errorf("Seconds(%g) = %v, want %q", c.v, err, c.want)
		}
	}
	if d, err := Seconds("x", 1e-12); err != nil || d <= 0 {
		t.Errorf("a tiny positive value must not become 0 (the default): %v, %v", d, err)
	}
	if d, err := Seconds("x", 1.5); err != nil || d != 1500*time.Millisecond {
		t.Errorf("1.5 s = %v, %v", d, err)
	}
}

// Issue 18: a 5 s deadline with a hanging presentation ended the run only
// after 60.7 s, the default grace being longer than the deadline it
// extends. Unset, the grace is now the default or the run's timeout,
// whichever is shorter; written explicitly it holds as written.
func TestPresentationGraceIsNeverLongerThanTheDeadlineUnlessWritten(t *testing.T) {
	cases := []struct {
		name             string
		timeout, grace   float64 // as the config has them (0: unset)
		wantTimeout      time.Duration
		wantGrace        time.Duration
		wantGraceDefault bool
	}{
		{"5 s deadline, grace unset", 5, 0, 5 * time.Second, 5 * time.Second, false},
		{"0.3 s deadline, grace unset", 0.3, 0, 300 * time.Millisecond, 300 * time.Millisecond, false},
		{"default deadline, grace unset", 0, 0, 0, coord.DefaultPresentationGrace, true},
		{"an hour, grace unset", 3600, 0, time.Hour, coord.DefaultPresentationGrace, true},
		{"5 s deadline, grace written 120", 5, 120, 5 * time.Second, 120 * time.Second, false},
		{"an hour, grace written 1", 3600, 1, time.Hour, time.Second, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := New(Agent{ID: "a", Backend: Backend{Type: "sim"}})
			cfg.Orchestrator.TimeoutSeconds = c.timeout
			cfg.Orchestrator.PresentationGraceSeconds = c.grace
			s, err := cfg.Settings()
			if err != nil {
				t.Fatal(err)
			}
			if s.Timeout != c.wantTimeout || s.PresentationGrace != c.wantGrace {
				t.Errorf("timeout %v, grace %v; want %v, %v", s.Timeout, s.PresentationGrace, c.wantTimeout, c.wantGrace)
			}
			if d := s.WithDefaults(); d.PresentationGrace > d.Timeout && c.grace == 0 {
				t.Errorf("the grace %v outlasts the deadline %v it extends", d.PresentationGrace, d.Timeout)
			}
		})
	}
	// From a file, the same: the written grace holds.
	cfg := parseOK(t, oneAgent+"timeout_settings: {orchestrator_timeout_seconds: 5, presentation_grace_seconds: 90}\n", nil)
	if s, _ := cfg.Settings(); s.PresentationGrace != 90*time.Second {
		t.Errorf("written grace = %v, want 90s", s.PresentationGrace)
	}
	cfg = parseOK(t, oneAgent+"timeout_settings: {orchestrator_timeout_seconds: 5}\n", nil)
	if s, _ := cfg.Settings(); s.PresentationGrace != 5*time.Second {
		t.Errorf("unset grace with a 5 s deadline = %v, want 5s", s.PresentationGrace)
	}
}
