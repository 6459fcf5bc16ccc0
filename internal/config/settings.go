package config

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/massgen/massgen/internal/coord"
)

// Settings converts the coordination keys of c into coord.Settings, the one
// vocabulary the orchestrator and the coordination machine use. It is the
// only place where a config key becomes a rule: YAML names and polarities
// (independent_first_answer, wait_for_first_answers, null for unlimited)
// are translated here, once. Values the rules do not know are errors, never
// a silent default: Validate reports them with file:line first, and this
// guards configs built in code.
func (c *Config) Settings() (coord.Settings, error) {
	o := c.Orchestrator
	var s coord.Settings
	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	s.VotingSensitivity, err = coord.ParseVotingSensitivity(o.VotingSensitivity)
	check(err)
	s.Novelty, err = coord.ParseNovelty(o.AnswerNovelty)
	check(err)
	s.RestartPolicy, err = coord.ParseRestartPolicy(o.RestartPolicy)
	check(err)

	switch {
	case o.UnlimitedAnswers:
		s.MaxAnswers = coord.Unlimited
	case o.MaxNewAnswersPerAgent < 0:
		check(fmt.Errorf("max_new_answers_per_agent must be a positive integer, or null for no limit, got %d", o.MaxNewAnswersPerAgent))
	default:
		s.MaxAnswers = o.MaxNewAnswersPerAgent
	}
	switch {
	case !o.IndependentFirstAnswer:
		s.FirstAnswers = coord.FirstAnswersInterruptible
	case !o.WaitForFirstAnswers:
		s.FirstAnswers = coord.FirstAnswersEager
	default:
		s.FirstAnswers = coord.FirstAnswersHold
	}
	if o.FailureBudget < 0 {
		check(fmt.Errorf("max_consecutive_failures must be a positive integer, got %d", o.FailureBudget))
	}
	s.FailureBudget = o.FailureBudget
	switch {
	case !o.FairnessEnabled:
		s.FairnessLeadCap = coord.FairnessOff
	case o.FairnessLeadCap < 0:
		check(fmt.Errorf("fairness_lead_cap_answers must be a positive integer, got %d", o.FairnessLeadCap))
	default:
		s.FairnessLeadCap = o.FairnessLeadCap
	}
	s.MaxAnswersGlobal = o.MaxNewAnswersGlobal

	s.Timeout, err = duration("orchestrator_timeout_seconds", o.TimeoutSeconds)
	check(err)
	s.TurnTimeout, err = duration("agent_turn_timeout_seconds", o.AgentTurnTimeoutSeconds)
	check(err)
	s.PresentationGrace, err = duration("presentation_grace_seconds", o.PresentationGraceSeconds)
	check(err)
	if s.PresentationGrace == 0 && err == nil {
		// Unset, the grace is the default but never longer than the
		// deadline it extends: a 5 s run must not present for 60 s more
		// (it ended after 60.7 s). Written explicitly, it holds as written.
		s.PresentationGrace = min(coord.DefaultPresentationGrace, cmp.Or(s.Timeout, coord.DefaultTimeout))
	}

	s.Checklist = c.checklist()
	for _, a := range c.Agents {
		if a.VotingSensitivity == "" {
			continue
		}
		level := a.VotingSensitivity
		if l, ok := votingFallback[level]; ok {
			level = l
		}
		v, err := coord.ParseVotingSensitivity(level)
		check(err)
		if s.PerAgent == nil {
			s.PerAgent = &coord.PerAgent{Sensitivity: map[string]coord.VotingSensitivity{}}
		}
		s.PerAgent.Sensitivity[a.ID] = v
	}
	s.MaxInjections, s.DeferUpdates, s.DeferBeforeChecklist = o.MaxMidstreamInjections, o.DeferPeerUpdates, o.NoUpdatesBeforeChecklist
	s.FirstRoundTimeout, err = duration("initial_round_timeout_seconds", o.FirstRoundTimeoutSeconds)
	check(err)
	s.LaterRoundTimeout, err = duration("subsequent_round_timeout_seconds", o.LaterRoundTimeoutSeconds)
	check(err)
	s.RoundGrace, err = duration("round_timeout_grace_seconds", o.RoundGraceSeconds)
	check(err)
	if _, explicit := c.src["AgentTurnTimeoutSeconds"]; !explicit && err == nil {
		// A round ends at its cutoff, two graces past its limit: a
		// per-turn timeout left at its default (upstream has none) must
		// not end the round first, or v0.1.73's 1800 s rounds would be
		// cut at 600 s without their warning.
		grace := cmp.Or(s.RoundGrace, coord.DefaultRoundGrace)
		if round := max(s.FirstRoundTimeout, s.LaterRoundTimeout); round > 0 {
			s.TurnTimeout = max(cmp.Or(s.TurnTimeout, coord.DefaultTurnTimeout), round+2*grace+time.Minute)
		}
	}

	if o.MaxOrchestrationRestarts < 0 {
		check(fmt.Errorf("max_orchestration_restarts must be 0 or more, got %d", o.MaxOrchestrationRestarts))
	}
	s.MaxRestarts = o.MaxOrchestrationRestarts
	s.MaxCostUSD, s.MaxTokens = o.MaxCostUSD, o.MaxTotalTokens

	switch p := c.UI.EnableFinalPresentation; {
	case p == nil:
		s.Presentation = coord.PresentAuto
	case *p:
		s.Presentation = coord.PresentAlways
	default:
		s.Presentation = coord.PresentNever
	}
	s.Direct = !c.UI.UseOrchestratorForSingleAgent
	s.Decomposition, s.Presenter = o.Decomposition.On, o.Decomposition.Presenter
	return s, errors.Join(errs...)
}

// duration converts a seconds key; 0 (unset) stays 0, the rule's default.
// NaN, the infinities, negatives and values past MaxSeconds are errors.
func duration(key string, secs float64) (time.Duration, error) {
	if p := secondsProblem(secs, true); p != "" {
		return 0, fmt.Errorf("%s %s", key, p)
	}
	return toDuration(secs), nil
}

// checklist is the checklist gate of the config (voting_sensitivity:
// checklist_gated, for the team or per agent), or nil.
func (c *Config) checklist() *coord.Checklist {
	o := c.Orchestrator
	var gated []string
	for _, a := range c.Agents {
		switch {
		case a.VotingSensitivity == "checklist_gated":
			gated = append(gated, a.ID)
		case a.VotingSensitivity == "" && o.ChecklistGated:
			gated = append(gated, a.ID)
		}
	}
	if len(gated) == 0 {
		return nil
	}
	ck := &coord.Checklist{Threshold: o.VotingThreshold, Criteria: c.checklistCriteria(),
		Generate: o.GenerateCriteria, MinCriteria: o.MinCriteria, MaxCriteria: o.MaxCriteria,
		Report: !o.Checklist.NoReport, Improvements: o.Checklist.Improvements}
	if len(gated) < len(c.Agents) {
		ck.Agents = gated
	}
	return ck
}
