package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
)

// A config that sets nothing runs by the same rules as coord's defaults:
// each default is defined once, in coord.
func TestDefaultConfigGivesTheDefaultSettings(t *testing.T) {
	s, err := New().Settings()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(coord.Settings{}.WithDefaults(), s.WithDefaults()); diff != "" {
		t.Errorf("settings of an empty config differ from the defaults (-want +got):\n%s", diff)
	}
}

func TestSettingsTranslateEveryKey(t *testing.T) {
	always := true
	c := New()
	c.Orchestrator = Orchestrator{
		VotingSensitivity: "strict", AnswerNovelty: "balanced", UnlimitedAnswers: true, RestartPolicy: "inject",
		IndependentFirstAnswer: true, WaitForFirstAnswers: false, FailureBudget: 4,
		TimeoutSeconds: 90, AgentTurnTimeoutSeconds: 30.5, PresentationGraceSeconds: 15,
		MaxOrchestrationRestarts: 2, MaxCostUSD: 0.5, MaxTotalTokens: 1000,
		FairnessEnabled: true, FairnessLeadCap: 3,
	}
	c.UI = UI{EnableFinalPresentation: &always, UseOrchestratorForSingleAgent: false}
	got, err := c.Settings()
	if err != nil {
		t.Fatal(err)
	}
	want := coord.Settings{
		VotingSensitivity: coord.VotingStrict, Novelty: coord.NoveltyBalanced, MaxAnswers: coord.Unlimited,
		RestartPolicy: coord.RestartInject, FirstAnswers: coord.FirstAnswersEager, FailureBudget: 4,
		Timeout: 90 * time.Second, TurnTimeout: 30500 * time.Millisecond, PresentationGrace: 15 * time.Second,
		MaxRestarts: 2, MaxCostUSD: 0.5, MaxTokens: 1000, Presentation: coord.PresentAlways, Direct: true,
		FairnessLeadCap: 3,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFirstAnswerKeysJoinInOneRule(t *testing.T) {
	for _, tt := range []struct {
		independent, wait bool
		want              coord.FirstAnswers
	}{
		{true, true, coord.FirstAnswersHold},
		{true, false, coord.FirstAnswersEager},
		{false, true, coord.FirstAnswersInterruptible},
		{false, false, coord.FirstAnswersInterruptible},
	} {
		c := New()
		c.Orchestrator.IndependentFirstAnswer, c.Orchestrator.WaitForFirstAnswers = tt.independent, tt.wait
		s, err := c.Settings()
		if err != nil || s.FirstAnswers != tt.want {
			t.Errorf("independent=%v wait=%v: got %v (%v), want %v", tt.independent, tt.wait, s.FirstAnswers, err, tt.want)
		}
	}
}

func TestUnknownValuesAreErrorsNotDefaults(t *testing.T) {
	c := New()
	c.Orchestrator.AnswerNovelty = "lenientt"
	c.Orchestrator.RestartPolicy = "cancel"
	c.Orchestrator.VotingSensitivity = "harsh"
	c.Orchestrator.PresentationGraceSeconds = -1
	_, err := c.Settings()
	if err == nil {
		t.Fatal("unknown values were accepted")
	}
	for _, want := range []string{`answer_novelty_requirement "lenientt"`, `restart_policy "cancel"`, `voting_sensitivity "harsh"`, "presentation_grace_seconds"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestPresentationGraceIsReadFromTimeoutSettings(t *testing.T) {
	c, err := Parse([]byte("agents:\n  - id: a\n    backend: {type: sim}\ntimeout_settings:\n  presentation_grace_seconds: 12\n"), "x.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings: %v", c.Warnings)
	}
	s, err := c.Settings()
	if err != nil || s.PresentationGrace != 12*time.Second {
		t.Errorf("grace = %v (%v), want 12s", s.PresentationGrace, err)
	}
}

// Fairness is on unless a config turns it off, as in upstream v0.1.73:
// the keys are rules now, not ignored features.
func TestFairnessKeys(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"", coord.DefaultFairnessLeadCap},
		{"orchestrator:\n  fairness_enabled: true\n  fairness_lead_cap_answers: 3\n", 3},
		{"orchestrator:\n  fairness_enabled: false\n  fairness_lead_cap_answers: 3\n", coord.FairnessOff},
	} {
		cfg := parseOK(t, oneAgent+tc.src, nil)
		if len(cfg.IgnoredFeatures()) != 0 || len(cfg.Warnings) != 0 {
			t.Errorf("%q: ignored %q, warnings %s", tc.src, cfg.IgnoredFeatures(), dump(cfg.Warnings))
		}
		s, err := cfg.Settings()
		if err != nil {
			t.Fatal(err)
		}
		if got := s.WithDefaults().FairnessLeadCap; got != tc.want {
			t.Errorf("%q: lead cap %d, want %d", tc.src, got, tc.want)
		}
	}
	ds := diagnose(t, oneAgent+"orchestrator:\n  fairness_lead_cap_answers: 0\n", nil)
	if len(ds.Errors()) != 1 || !strings.Contains(ds.Errors()[0].Message, "1 or more") {
		t.Errorf("a lead cap of 0: %s", dump(ds))
	}
}

// timeout_settings' per-round timeouts are rules (coord's rounds): null is
// upstream's "no limit", the grace defaults to 120 s.
func TestRoundTimeoutKeys(t *testing.T) {
	cfg := parseOK(t, oneAgent+`timeout_settings:
  initial_round_timeout_seconds: 600
  subsequent_round_timeout_seconds: 300
  round_timeout_grace_seconds: 120.5
`, nil)
	if len(cfg.IgnoredFeatures()) != 0 || len(cfg.Warnings) != 0 {
		t.Errorf("ignored %q, warnings %s", cfg.IgnoredFeatures(), dump(cfg.Warnings))
	}
	s, err := cfg.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.FirstRoundTimeout != 10*time.Minute || s.LaterRoundTimeout != 5*time.Minute || s.RoundGrace != 120500*time.Millisecond {
		t.Errorf("settings %v %v %v", s.FirstRoundTimeout, s.LaterRoundTimeout, s.RoundGrace)
	}
	cfg = parseOK(t, oneAgent+"timeout_settings: {initial_round_timeout_seconds: null, subsequent_round_timeout_seconds: null}\n", nil)
	s, _ = cfg.Settings()
	if s = s.WithDefaults(); s.FirstRoundTimeout != 0 || s.LaterRoundTimeout != 0 || s.RoundGrace != coord.DefaultRoundGrace {
		t.Errorf("null limits: %v %v %v", s.FirstRoundTimeout, s.LaterRoundTimeout, s.RoundGrace)
	}
	if ds := diagnose(t, oneAgent+"timeout_settings: {subsequent_round_timeout_seconds: -5}\n", nil); len(ds.Errors()) != 1 {
		t.Errorf("a negative limit: %s", dump(ds))
	}
}

// voting_sensitivity: checklist_gated (for the team or per agent),
// voting_threshold and checklist_criteria_inline make the checklist gate.
func TestChecklistKeys(t *testing.T) {
	cfg := parseOK(t, `agents:
  - id: a
    backend: {type: openai, model: gpt-4o}
  - id: b
    backend: {type: openai, model: gpt-4o}
    voting_sensitivity: lenient
orchestrator:
  voting_sensitivity: checklist_gated
  voting_threshold: 2
  coordination:
    checklist_criteria_inline:
      - {text: "Cites its sources", category: must}
      - {text: "Explains the trade-offs", category: primary, verify_by: "reading"}
      - {text: "Has a diagram", category: could}
`, nil)
	for _, f := range cfg.IgnoredFeatures() {
		if strings.Contains(f, "checklist") || strings.Contains(f, "voting_threshold") {
			t.Errorf("ignored: %q", cfg.IgnoredFeatures())
		}
	}
	s, err := cfg.Settings()
	if err != nil {
		t.Fatal(err)
	}
	want := &coord.Checklist{Threshold: 2, Agents: []string{"a"}, Report: true, Criteria: []coord.Criterion{
		{Text: "Cites its sources", Category: "standard"}, {Text: "Explains the trade-offs", Category: "primary"},
		{Text: "Has a diagram", Category: "stretch"}}}
	if diff := cmp.Diff(want, s.Checklist); diff != "" {
		t.Errorf("checklist (-want +got):\n%s", diff)
	}
	if s, _ := parseOK(t, oneAgent, nil).Settings(); s.Checklist != nil {
		t.Errorf("a config without checklist_gated is gated: %+v", s.Checklist)
	}
	for _, bad := range []string{"orchestrator: {voting_threshold: 11}\n", "orchestrator: {coordination: {checklist_criteria_inline: [{category: must}]}}\n"} {
		if ds := diagnose(t, oneAgent+bad, nil); len(ds.Errors()) != 1 {
			t.Errorf("%q: %s", bad, dump(ds))
		}
	}
}

// The mid-stream update keys are rules (coord's midstream.go).
func TestMidstreamKeys(t *testing.T) {
	cfg := parseOK(t, oneAgent+`orchestrator:
  restart_policy: inject
  max_midstream_injections_per_round: 3
  defer_peer_updates_until_restart: true
  allow_midstream_peer_updates_before_checklist_submit: false
`, nil)
	if len(cfg.IgnoredFeatures()) != 0 {
		t.Errorf("ignored %q", cfg.IgnoredFeatures())
	}
	s, err := cfg.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxInjections != 3 || !s.DeferUpdates || !s.DeferBeforeChecklist {
		t.Errorf("settings: %d %v %v", s.MaxInjections, s.DeferUpdates, s.DeferBeforeChecklist)
	}
	if s, _ := parseOK(t, oneAgent, nil).Settings(); s.WithDefaults().MaxInjections != coord.DefaultMaxInjections || s.DeferUpdates {
		t.Errorf("defaults: %+v", s)
	}
	if ds := diagnose(t, oneAgent+"orchestrator: {max_midstream_injections_per_round: 0}\n", nil); len(ds.Errors()) != 1 {
		t.Errorf("0 injections: %s", dump(ds))
	}
}

// evaluation_criteria_generator asks the checklist for generated criteria.
func TestCriteriaGeneratorKeys(t *testing.T) {
	cfg := parseOK(t, oneAgent+`orchestrator:
  voting_sensitivity: checklist_gated
  coordination:
    evaluation_criteria_generator: {enabled: true, min_criteria: 3, max_criteria: 6, persist_across_turns: false}
`, nil)
	if len(cfg.IgnoredFeatures()) != 0 || len(cfg.Warnings) != 0 {
		t.Errorf("ignored %q, warnings %s", cfg.IgnoredFeatures(), dump(cfg.Warnings))
	}
	s, err := cfg.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if ck := s.Checklist; ck == nil || !ck.Generate || ck.MinCriteria != 3 || ck.MaxCriteria != 6 {
		t.Errorf("checklist %+v", s.Checklist)
	}
	if ds := diagnose(t, oneAgent+"orchestrator: {coordination: {evaluation_criteria_generator: {enabled: true, min_criteria: 8, max_criteria: 5}}}\n", nil); len(ds.Errors()) != 1 {
		t.Errorf("min > max: %s", dump(ds))
	}
	cfg = parseOK(t, oneAgent+"orchestrator: {coordination: {evaluation_criteria_generator: {enabled: true, persist_across_turns: true}}}\n", nil)
	if len(cfg.IgnoredFeatures()) != 1 {
		t.Errorf("persist_across_turns: ignored %q", cfg.IgnoredFeatures())
	}
}

// An agent's own voting_sensitivity sets its prompt level (the nearest
// level for v0.1.73's other values, with a warning) beside the team's.
func TestPerAgentVotingSensitivity(t *testing.T) {
	cfg := parseOK(t, `agents:
  - id: a
    backend: {type: openai, model: gpt-4o}
    voting_sensitivity: strict
  - id: b
    backend: {type: openai, model: gpt-4o}
    voting_sensitivity: roi
  - id: c
    backend: {type: openai, model: gpt-4o}
`, nil)
	s, err := cfg.Settings()
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]coord.VotingSensitivity{"a": coord.VotingStrict, "b": coord.VotingBalanced, "c": coord.VotingLenient} {
		if got := s.SensitivityOf(id); got != want {
			t.Errorf("%s votes by %s, want %s", id, got, want)
		}
	}
	if got := cfg.IgnoredFeatures(); len(got) != 1 || got[0] != "voting_sensitivity: roi (agent b)" {
		t.Errorf("ignored %q, want only b's roi", got)
	}
	if s.Checklist != nil {
		t.Errorf("no agent is gated: %+v", s.Checklist)
	}
}

// Rounds longer than the default per-turn timeout are not cut by it: left
// at its default, the turn timeout makes room for the round's cutoff; set
// explicitly, it holds as written.
func TestRoundTimeoutsOutlastTheDefaultTurnTimeout(t *testing.T) {
	cfg := parseOK(t, oneAgent+"timeout_settings: {initial_round_timeout_seconds: 1800, subsequent_round_timeout_seconds: 1800, round_timeout_grace_seconds: 450}\n", nil)
	s, _ := cfg.Settings()
	if want := 1800*time.Second + 2*450*time.Second + time.Minute; s.TurnTimeout != want {
		t.Errorf("turn timeout %v, want %v", s.TurnTimeout, want)
	}
	cfg = parseOK(t, oneAgent+"timeout_settings: {initial_round_timeout_seconds: 1800, agent_turn_timeout_seconds: 300}\n", nil)
	if s, _ := cfg.Settings(); s.TurnTimeout != 300*time.Second {
		t.Errorf("explicit turn timeout %v, want 5m", s.TurnTimeout)
	}
	cfg = parseOK(t, oneAgent+"timeout_settings: {initial_round_timeout_seconds: 60}\n", nil)
	if s, _ := cfg.Settings(); s.TurnTimeout != coord.DefaultTurnTimeout {
		t.Errorf("short rounds: turn timeout %v, want the default", s.TurnTimeout)
	}
}
