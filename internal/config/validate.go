package config

import (
	"fmt"
	"math"
	"slices"

	"github.com/massgen/massgen/internal/provider"
)

// Validate checks the rules that hold for any config, whether it came from a
// file or was built in code: agents exist with unique ids, backend types are
// known, models are named, enum and range settings are valid. For a config
// returned by Parse the diagnostics point at the file; for one built in code
// they carry only key paths. Type errors (a string where a number belongs)
// can only be seen in the source and are reported by Parse.
//
// Zero values are not treated as "use the default": build configs with New
// (or start from DefaultOrchestrator / DefaultUI) so that defaults apply.
func (c *Config) Validate() Diagnostics {
	v := &validator{c: c}
	v.agents()
	v.orchestrator()
	v.decomposition()
	v.enum(c.srcKey("DisplayType", "ui.display_type"), c.UI.DisplayType, "display type", displayTypeValues)
	return v.diags
}

type validator struct {
	c     *Config
	diags Diagnostics
}

// errorf reports an error unless the decoder already reported this key or
// one of its parents: one mistake, one message.
func (v *validator) errorf(key, msg, sugg string) {
	for k := key; ; k = parent(k) {
		if v.c.bad[k] {
			return
		}
		if k == "" {
			break
		}
	}
	p := v.c.at(key)
	v.diags = append(v.diags, Diagnostic{Severity: Error, File: v.c.Path, Line: p.line, Col: p.col, Key: key, Message: msg, Suggestion: sugg})
}

// at finds the source position of key, or of its nearest parent that has
// one (a missing key is reported where its map starts).
func (c *Config) at(key string) pos {
	for k := key; ; k = parent(k) {
		if p, ok := c.loc[k]; ok {
			return p
		}
		if k == "" {
			return pos{}
		}
	}
}

// srcKey names the key a field was read from, or its canonical key.
func (c *Config) srcKey(field, def string) string {
	if k, ok := c.src[field]; ok {
		return k
	}
	return def
}

func (c *Config) agentPath(i int) string {
	if i < len(c.agentPaths) {
		return c.agentPaths[i]
	}
	if c.single && i == 0 {
		return "agent"
	}
	return index("agents", i)
}

func (v *validator) agents() {
	c := v.c
	if len(c.Agents) == 0 {
		v.errorf("agents", "the config defines no agents", "add an 'agents:' list, or a single 'agent:' map")
		return
	}
	if len(c.Agents) > MaxAgents {
		v.errorf("agents", fmt.Sprintf("the config defines %d agents; a team has at most %d", len(c.Agents), MaxAgents),
			"use fewer agents, or split the work into several runs (upstream's largest example team has 50)")
		return
	}
	first := map[string]int{}
	for i, a := range c.Agents {
		path := c.agentPath(i)
		idKey := join(path, "id")
		switch j, dup := first[a.ID]; {
		case a.ID == "":
			v.errorf(idKey, "agent has no 'id'", fmt.Sprintf("add 'id: \"agent%d\"' (ids must be unique)", i+1))
		case dup:
			where := c.agentPath(j)
			if c.Agents[j].Line > 0 {
				where = fmt.Sprintf("line %d", c.Agents[j].Line)
			}
			v.errorf(idKey, fmt.Sprintf("duplicate agent id '%s' (first at %s)", a.ID, where), "give each agent a unique id")
		default:
			first[a.ID] = i
		}
		v.backend(a.Backend, join(path, "backend"))
	}
}

func (v *validator) backend(b Backend, path string) {
	// One verdict on the backend kind, the same words as a run's.
	if vd := provider.Judge(b.Type, b.Model, b.BaseURL); !vd.OK() {
		v.errorf(join(path, vd.Key), vd.Problem, vd.Suggestion)
	}
	if s := b.Sim; s != nil {
		if s.TTFTMillis < 0 || s.TTFTMillis > MaxSeconds*1000 {
			v.errorf(join(path, "ttft_ms"), fmt.Sprintf("must be between 0 and %d (a year), got %d", MaxSeconds*1000, s.TTFTMillis), "")
		}
		if s.TokensPerSecond < 0 || math.IsNaN(s.TokensPerSecond) || math.IsInf(s.TokensPerSecond, 0) {
			v.errorf(join(path, "tokens_per_second"), fmt.Sprintf("must be a positive number (0 for the default), got %g", s.TokensPerSecond), "")
		}
	}
}

func (v *validator) orchestrator() {
	c, o := v.c, v.c.Orchestrator
	switch vs := o.VotingSensitivity; {
	case slices.Contains(levelValues, vs):
	case slices.Contains(votingValues, vs):
		// Only a config built in code gets here: Parse maps these.
		v.errorf("orchestrator.voting_sensitivity", fmt.Sprintf("voting_sensitivity '%s' is not implemented yet", vs),
			fmt.Sprintf("use lenient, balanced or strict (a config file's '%s' votes by '%s')", vs, votingFallback[vs]))
	default:
		v.enum("orchestrator.voting_sensitivity", vs, "voting_sensitivity", votingValues)
	}
	v.enum("orchestrator.answer_novelty_requirement", o.AnswerNovelty, "answer_novelty_requirement", levelValues)
	if !o.UnlimitedAnswers && o.MaxNewAnswersPerAgent < 1 {
		v.errorf("orchestrator.max_new_answers_per_agent",
			fmt.Sprintf("must be a positive integer, or null for no limit, got %d", o.MaxNewAnswersPerAgent), "")
	}
	v.seconds(c.srcKey("TimeoutSeconds", "timeout_settings.orchestrator_timeout_seconds"), o.TimeoutSeconds)
	v.seconds(c.srcKey("AgentTurnTimeoutSeconds", "orchestrator.agent_turn_timeout_seconds"), o.AgentTurnTimeoutSeconds)
	// 0 is each one's default here: a config built in code leaves them so.
	if p := secondsProblem(o.PresentationGraceSeconds, true); p != "" {
		v.errorf("timeout_settings.presentation_grace_seconds", p, secondsHint("30"))
	}
	if p := secondsProblem(o.StreamIdleTimeoutSeconds, true); p != "" {
		v.errorf("timeout_settings.stream_idle_timeout_seconds", p, secondsHint("60"))
	}
	if o.MaxOrchestrationRestarts < 0 {
		v.errorf("orchestrator.coordination.max_orchestration_restarts",
			fmt.Sprintf("must be 0 or more, got %d", o.MaxOrchestrationRestarts), "use 0 to disable post-evaluation restarts")
	}
	v.enum("orchestrator.restart_policy", o.RestartPolicy, "restart_policy", restartPolicyValues)
	if o.MaxCostUSD < 0 || math.IsInf(o.MaxCostUSD, 0) || math.IsNaN(o.MaxCostUSD) {
		v.errorf("orchestrator.max_cost_usd", fmt.Sprintf("must be a positive number of US dollars, got %g", o.MaxCostUSD), "use e.g. 0.50, or leave it out for no limit")
	}
	if o.MaxTotalTokens < 0 {
		v.errorf("orchestrator.max_total_tokens", fmt.Sprintf("must be a positive number of tokens, got %d", o.MaxTotalTokens), "leave it out for no limit")
	}
	if o.FailureBudget < 1 {
		v.errorf("orchestrator.max_consecutive_failures", fmt.Sprintf("must be a positive integer, got %d", o.FailureBudget), "")
	}
	for i, cp := range o.ContextPaths {
		for _, d := range contextPathDiagnostics(cp, index("orchestrator.context_paths", i)) {
			v.errorf(d.Key, d.Message, d.Suggestion)
		}
	}
}

func (v *validator) enum(key, val, what string, valid []string) {
	if !slices.Contains(valid, val) {
		v.errorf(key, fmt.Sprintf("invalid %s '%s'", what, val), oneOf(val, valid))
	}
}

// seconds requires a finite positive duration that fits a time.Duration
// (MaxSeconds): a zero timeout would end every run at once, an infinite
// one cannot be scheduled, and one past the limit wraps around.
func (v *validator) seconds(key string, s float64) {
	if p := secondsProblem(s, false); p != "" {
		v.errorf(key, p, "use a value like 1800 (30 minutes)")
	}
}

// contextPathDiagnostics checks one context path entry; key is its path.
func contextPathDiagnostics(cp ContextPath, key string) []Diagnostic {
	var out []Diagnostic
	if cp.Path == "" {
		out = append(out, Diagnostic{Key: join(key, "path"), Message: "context path entry has no 'path'",
			Suggestion: "add 'path:' with a file or directory"})
	}
	if !slices.Contains(permissionValues, cp.Permission) {
		out = append(out, Diagnostic{Key: join(key, "permission"), Message: fmt.Sprintf("invalid permission '%s'", cp.Permission),
			Suggestion: oneOf(cp.Permission, permissionValues)})
	}
	return out
}
