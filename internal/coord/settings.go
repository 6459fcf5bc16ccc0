package coord

import (
	"fmt"
	"time"
)

// Settings are the rules of a run (DESIGN.md §2, "Limits and failure
// handling"). They are the one vocabulary of coordination: the config
// package converts its YAML into them (config.(*Config).Settings), the
// orchestrator holds them, and the Machine enforces them.
//
// The zero value of every field means its default, and WithDefaults is the
// only place a default is applied: a Settings{} and a config that sets no
// key behave the same. Where "none" must be expressible beside the default,
// a negative value means none (MaxAnswers, TurnTimeout).
type Settings struct {
	VotingSensitivity VotingSensitivity // how strict agents are told to be when voting (prompt only)
	Novelty           Novelty           // answer_novelty_requirement
	// MaxAnswers caps new answers per agent (max_new_answers_per_agent):
	// 0 means DefaultMaxAnswers, Unlimited means no cap.
	MaxAnswers    int
	RestartPolicy RestartPolicy // what a new answer does to other agents' in-flight turns
	FirstAnswers  FirstAnswers  // independent_first_answer and wait_for_first_answers
	// FailureBudget is how many failed turns in a row remove an agent
	// (max_consecutive_failures); 0 means DefaultFailureBudget.
	FailureBudget int
	// Timeout bounds the whole run (orchestrator_timeout_seconds); 0 means
	// DefaultTimeout. At the deadline, the current votes decide.
	Timeout time.Duration
	// TurnTimeout bounds one turn (agent_turn_timeout_seconds): 0 means
	// DefaultTurnTimeout, a negative value none.
	TurnTimeout time.Duration
	// PresentationGrace is how long the final presentation may run past the
	// run deadline (timeout_settings.presentation_grace_seconds); 0 means
	// DefaultPresentationGrace. Past it, the winner's stored answer is final.
	PresentationGrace time.Duration
	// RetryBackoff is the wait before an agent's first retry after a failed
	// turn; it doubles with each further failure up to RetryBackoffMax
	// (0 means DefaultRetryBackoff and DefaultRetryBackoffMax).
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	// MaxRestarts is max_orchestration_restarts: > 0 enables post-evaluation.
	MaxRestarts  int
	Presentation Presentation // whether the winner presents after consensus
	// Direct runs a one-agent team as a single plain model call, without
	// the workflow tools (use_orchestrator_for_single_agent: false). It is
	// ignored for a team of several agents.
	Direct bool
	// MaxCostUSD and MaxTokens stop coordination once the run has spent that
	// much (0 = no limit); the best answer so far is then final.
	MaxCostUSD float64
	MaxTokens  int64
	// FairnessLeadCap is fairness_lead_cap_answers: an agent may not get
	// more than this many answers ahead of the slowest agent still working
	// (fairness.go). 0 means DefaultFairnessLeadCap; FairnessOff
	// (fairness_enabled: false) turns fairness off, the injection cap too.
	FairnessLeadCap int
	// MaxAnswersGlobal caps the new answers of all agents together
	// (max_new_answers_global, upstream v0.1.73): once the team has given
	// that many, a new_answer is refused and the agent is told to vote (to
	// stop in decomposition mode). 0 means no cap.
	MaxAnswersGlobal int `json:",omitempty"`
	// FirstRoundTimeout and LaterRoundTimeout are soft limits on one turn
	// (a round: initial_round_timeout_seconds for a turn started before the
	// agent had an answer, subsequent_round_timeout_seconds after); 0 is no
	// limit. RoundGrace (round_timeout_grace_seconds, 0 means
	// DefaultRoundGrace) is the time from the soft limit to the hard one,
	// and from the hard one to the end of the turn (rounds.go).
	FirstRoundTimeout time.Duration
	LaterRoundTimeout time.Duration
	RoundGrace        time.Duration
	// MaxInjections is max_midstream_injections_per_round: how many new
	// answers one turn is sent under restart_policy: inject (midstream.go).
	// 0 means DefaultMaxInjections, Unlimited no cap; fairness off lifts it.
	MaxInjections int
	// DeferUpdates is defer_peer_updates_until_restart: new answers are not
	// injected; the turn's next restart shows them. DeferBeforeChecklist is
	// allow_midstream_peer_updates_before_checklist_submit: false: under the
	// checklist gate, defer even before the agent's first checklist.
	DeferUpdates         bool
	DeferBeforeChecklist bool
	// Checklist turns on checklist-gated voting (checklist.go); nil is off.
	Checklist *Checklist `json:",omitempty"`
	// Decomposition is coordination_mode: decomposition (decompose.go):
	// stop replaces vote, the answer cap is a streak, and Presenter
	// (presenter_agent; "" or unknown: the last agent) merges the work.
	Decomposition bool   `json:",omitempty"`
	Presenter     string `json:",omitempty"`
	// PerAgent holds the rules of agents that differ from the team's (an
	// agent's own voting_sensitivity); nil when none do.
	PerAgent *PerAgent `json:",omitempty"`
}

// PerAgent holds per-agent rules. A pointer in Settings keeps Settings
// comparable.
type PerAgent struct {
	// Sensitivity is an agent's own voting_sensitivity level, for its
	// prompt.
	Sensitivity map[string]VotingSensitivity `json:",omitempty"`
}

// SensitivityOf is the voting sensitivity agent id is told to vote by.
func (s Settings) SensitivityOf(id string) VotingSensitivity {
	if s.PerAgent != nil {
		if v, ok := s.PerAgent.Sensitivity[id]; ok {
			return v
		}
	}
	return s.VotingSensitivity
}

// Defaults. Each is set here and nowhere else; config documents them by
// referring to these constants.
const (
	DefaultMaxAnswers    = 5 // bounded, so a team that keeps rewriting converges
	DefaultFailureBudget = 3
	DefaultTimeout       = 30 * time.Minute
	DefaultTurnTimeout   = 10 * time.Minute
	// DefaultPresentationGrace is short next to a run, long enough for a
	// presentation that restates a long answer at a slow provider's pace.
	DefaultPresentationGrace = 60 * time.Second
	DefaultRetryBackoff      = 1 * time.Second
	DefaultRetryBackoffMax   = 30 * time.Second
	// Unlimited is the MaxAnswers of max_new_answers_per_agent: null.
	Unlimited = -1
	// DefaultFairnessLeadCap is upstream v0.1.73's default lead cap: fairness
	// is on in every run that does not turn it off.
	DefaultFairnessLeadCap = 2
	// FairnessOff is the FairnessLeadCap of fairness_enabled: false.
	FairnessOff = -1
	// DefaultMaxInjections is upstream v0.1.73's
	// max_midstream_injections_per_round.
	DefaultMaxInjections = 2
	// DefaultRoundGrace is upstream v0.1.73's round_timeout_grace_seconds.
	DefaultRoundGrace = 120 * time.Second
)

// WithDefaults returns s with every zero field set to its default.
func (s Settings) WithDefaults() Settings {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if s.MaxAnswers == 0 {
		s.MaxAnswers = DefaultMaxAnswers
	}
	if s.FairnessLeadCap == 0 {
		s.FairnessLeadCap = DefaultFairnessLeadCap
	}
	if s.MaxInjections == 0 {
		s.MaxInjections = DefaultMaxInjections
	}
	if s.FailureBudget <= 0 {
		s.FailureBudget = DefaultFailureBudget
	}
	def(&s.Timeout, DefaultTimeout)
	def(&s.TurnTimeout, DefaultTurnTimeout)
	def(&s.PresentationGrace, DefaultPresentationGrace)
	def(&s.RetryBackoff, DefaultRetryBackoff)
	def(&s.RetryBackoffMax, DefaultRetryBackoffMax)
	def(&s.RoundGrace, DefaultRoundGrace)
	return s
}

// level is the shared scale of voting_sensitivity and
// answer_novelty_requirement.
type level int

var levelNames = []string{"lenient", "balanced", "strict"}

func (l level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("level(%d)", int(l))
	}
	return levelNames[l]
}

func parseLevel(what, s string) (level, error) {
	for i, n := range levelNames {
		if s == n {
			return level(i), nil
		}
	}
	if s == "" {
		return 0, nil
	}
	return 0, fmt.Errorf("invalid %s %q: want lenient, balanced or strict", what, s)
}

// Novelty is answer_novelty_requirement: how different a new answer must
// be from every current answer.
type Novelty level

const (
	NoveltyLenient  Novelty = iota // only exact duplicates are rejected (the default)
	NoveltyBalanced                // word-set Jaccard > 0.70 is rejected
	NoveltyStrict                  // word-set Jaccard > 0.50 is rejected
)

func (n Novelty) String() string { return level(n).String() }

// ParseNovelty reads answer_novelty_requirement; "" is the default.
func ParseNovelty(s string) (Novelty, error) {
	l, err := parseLevel("answer_novelty_requirement", s)
	return Novelty(l), err
}

// VotingSensitivity is voting_sensitivity: how critical agents are told to
// be before voting for an existing answer. Only the prompt reads it.
type VotingSensitivity level

const (
	VotingLenient VotingSensitivity = iota // the default
	VotingBalanced
	VotingStrict
)

func (v VotingSensitivity) String() string { return level(v).String() }

// ParseVotingSensitivity reads voting_sensitivity; "" is the default.
func ParseVotingSensitivity(s string) (VotingSensitivity, error) {
	l, err := parseLevel("voting_sensitivity", s)
	return VotingSensitivity(l), err
}

// RestartPolicy is restart_policy: what a new answer does to a turn of
// another agent that is in flight.
type RestartPolicy int

const (
	// RestartCancel cancels the turn at once (no tokens keep burning on an
	// outdated answer set) and starts a fresh one. The default ("restart").
	RestartCancel RestartPolicy = iota
	// RestartInject lets the turn finish its current step, then continues
	// it with an update message carrying the new answers ("inject").
	RestartInject
)

func (p RestartPolicy) String() string {
	if p == RestartInject {
		return "inject"
	}
	return "restart"
}

// ParseRestartPolicy reads restart_policy; "" is the default.
func ParseRestartPolicy(s string) (RestartPolicy, error) {
	switch s {
	case "", "restart":
		return RestartCancel, nil
	case "inject":
		return RestartInject, nil
	}
	return 0, fmt.Errorf("invalid restart_policy %q: want restart or inject", s)
}

// FirstAnswers is how the team treats agents still writing their first
// answer. It joins two config keys, because the second only means
// something when the first is true.
type FirstAnswers int

const (
	// FirstAnswersHold keeps first answers independent work (nobody is
	// interrupted while writing theirs: independent_first_answer: true),
	// and an agent that has answered waits while another agent's first
	// answer is in flight (wait_for_first_answers: true): that answer is
	// certain to come and to cancel any turn started before it, so
	// starting one only burns tokens. The default; waiting applies to the
	// restart policy only.
	FirstAnswersHold FirstAnswers = iota
	// FirstAnswersEager keeps first answers independent but starts other
	// agents' next turns at once (wait_for_first_answers: false).
	FirstAnswersEager
	// FirstAnswersInterruptible lets others' answers interrupt an agent's
	// first turn like any other (independent_first_answer: false).
	FirstAnswersInterruptible
)

// Independent reports whether first answers are left uninterrupted.
func (f FirstAnswers) Independent() bool { return f != FirstAnswersInterruptible }

func (f FirstAnswers) String() string {
	return [...]string{"hold", "eager", "interruptible"}[f]
}

// Presentation is whether the winner presents after consensus. Upstream
// MassGen always does, and a one-agent team then pays for a call that
// restates the answer it has just voted for.
type Presentation int

const (
	// PresentAuto presents unless the team is a single agent: with no other
	// answers to combine, its winning answer is already the final answer.
	PresentAuto Presentation = iota
	// PresentAlways always presents (ui.enable_final_presentation: true).
	PresentAlways
	// PresentNever makes the winning answer the final answer
	// (ui.enable_final_presentation: false).
	PresentNever
)

func (p Presentation) String() string {
	return [...]string{"auto", "always", "never"}[p]
}
