package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/coord"
)

const wantSeconds = "a positive number of seconds"

// timeoutSettings reads the top-level `timeout_settings`, the key upstream's
// CLI actually honours. It runs before orchestrator() so that the more
// specific orchestrator keys override it.
func (d *decoder) timeoutSettings(p *pair) {
	m, ok := d.mapping("timeout_settings", p, "a map")
	if !ok {
		return
	}
	o := &d.cfg.Orchestrator
	for _, e := range m.pairs {
		key := join("timeout_settings", e.key)
		switch e.key {
		case "orchestrator_timeout_seconds":
			if v, ok := d.seconds(key, e, "1800"); ok {
				o.TimeoutSeconds = v
				d.cfg.src["TimeoutSeconds"] = key
			}
		case "agent_turn_timeout_seconds":
			if v, ok := d.seconds(key, e, "600"); ok {
				o.AgentTurnTimeoutSeconds = v
				d.cfg.src["AgentTurnTimeoutSeconds"] = key
			}
		case "stream_idle_timeout_seconds":
			// 0 would read as "the default": it is refused rather than ignored.
			if v, ok := d.seconds(key, e, "60, or leave it out for the default (60)"); ok {
				o.StreamIdleTimeoutSeconds = v
			}
		case "initial_round_timeout_seconds", "subsequent_round_timeout_seconds":
			// null (upstream's default) is no limit.
			if e.val.isNull() {
				continue
			}
			if v, ok := d.seconds(key, e, "600, or null for no limit"); ok {
				if e.key == "initial_round_timeout_seconds" {
					o.FirstRoundTimeoutSeconds = v
				} else {
					o.LaterRoundTimeoutSeconds = v
				}
			}
		case "round_timeout_grace_seconds":
			if v, ok := d.seconds(key, e, "120, or leave it out for the default (120)"); ok {
				o.RoundGraceSeconds = v
			}
		case "presentation_grace_seconds":
			// Explicit, it holds as written; 0 would read as "the default".
			if v, ok := d.seconds(key, e, "30, or leave it out for the default (60, at most the run's timeout)"); ok {
				o.PresentationGraceSeconds = v
			}
		default:
			if slices.Contains(timeoutSettingsKeys, e.key) {
				if _, ok := d.number(key, e, wantSeconds); ok {
					d.unsupported(e, key)
				}
				continue
			}
			d.unknown(e, "timeout_settings", timeoutSettingsKeys)
		}
	}
}

// override sets a seconds field from an orchestrator key, warning when
// timeout_settings already set it to something else: two sources that
// disagree deserve a word, and the user should know which one won.
func (d *decoder) override(field string, dst *float64, key string, v float64) {
	if prev, ok := d.cfg.src[field]; ok && *dst != v {
		d.warnAt(d.cfg.loc[key], key, fmt.Sprintf("overrides %s (%g); using %g", prev, *dst, v), "")
	}
	*dst = v
	d.cfg.src[field] = key
}

func (d *decoder) orchestrator(p *pair) {
	c := d.cfg
	o := &c.Orchestrator
	m, ok := d.mapping("orchestrator", p, "a map")
	if !ok {
		return
	}
	for _, e := range m.pairs {
		key := join("orchestrator", e.key)
		switch e.key {
		case "voting_sensitivity":
			if s, ok := d.str(key, e); ok {
				o.VotingSensitivity = d.votingSensitivity(e, key, s)
			}
		case "answer_novelty_requirement":
			if s, ok := d.str(key, e); ok {
				o.AnswerNovelty = s
			}
		case "max_new_answers_per_agent":
			// Absent means the default cap; an explicit null means no cap.
			c.loc[key] = e.val.pos
			if e.val.isNull() {
				o.MaxNewAnswersPerAgent, o.UnlimitedAnswers = 0, true
			} else if v, ok := d.integer(key, e, "a positive integer, or null for no limit"); ok {
				o.MaxNewAnswersPerAgent = v
			}
		case "timeout":
			d.orchestratorTimeout(e, key)
		case "agent_turn_timeout_seconds":
			if v, ok := d.seconds(key, e, "600"); ok {
				d.override("AgentTurnTimeoutSeconds", &o.AgentTurnTimeoutSeconds, key, v)
			}
		case "coordination":
			d.coordination(e, key)
		case "restart_policy":
			if s, ok := d.str(key, e); ok {
				o.RestartPolicy = s
			}
		case "independent_first_answer":
			if b, ok := d.boolean(key, e); ok {
				o.IndependentFirstAnswer = b
			}
		case "max_cost_usd":
			if v, ok := d.number(key, e, "a positive number of US dollars"); ok {
				o.MaxCostUSD = v
			}
		case "max_total_tokens":
			if v, ok := d.integer(key, e, "a positive whole number of tokens"); ok {
				o.MaxTotalTokens = int64(v)
			}
		case "wait_for_first_answers":
			if b, ok := d.boolean(key, e); ok {
				o.WaitForFirstAnswers = b
			}
		case "voting_threshold":
			if v, ok := d.integer(key, e, "a whole number from 0 to 10"); ok && (v < 0 || v > 10) {
				d.fail(e.val.pos, key, fmt.Sprintf("voting_threshold must be from 0 to 10, got %d", v), "e.g. 2 (strict) or 5 (the default)")
			} else if ok {
				o.VotingThreshold = v
			}
		case "max_midstream_injections_per_round":
			if v, ok := d.integer(key, e, "a positive integer (default 2)"); ok && v < 1 {
				d.fail(e.val.pos, key, fmt.Sprintf("max_midstream_injections_per_round must be 1 or more, got %d", v),
					"for no mid-stream updates at all, set defer_peer_updates_until_restart: true")
			} else if ok {
				o.MaxMidstreamInjections = v
			}
		case "defer_peer_updates_until_restart":
			o.DeferPeerUpdates, _ = d.boolean(key, e)
		case "allow_midstream_peer_updates_before_checklist_submit":
			if b, ok := d.boolean(key, e); ok {
				o.NoUpdatesBeforeChecklist = !b
			}
		case "fairness_enabled":
			if b, ok := d.boolean(key, e); ok {
				o.FairnessEnabled = b
			}
		case "fairness_lead_cap_answers":
			if v, ok := d.integer(key, e, "a positive integer (default 2)"); ok && v < 1 {
				d.fail(e.val.pos, key, fmt.Sprintf("fairness_lead_cap_answers must be 1 or more, got %d", v),
					"use 1 or more, or fairness_enabled: false to turn fairness off")
			} else if ok {
				o.FairnessLeadCap = v
			}
		case "max_consecutive_failures":
			if v, ok := d.integer(key, e, "a positive integer"); ok {
				o.FailureBudget = v
			}
		case "skip_coordination_rounds":
			if b, ok := d.boolean(key, e); ok {
				o.SkipCoordinationRounds = b
				d.unsupported(e, key)
			}
		case "context_paths":
			o.ContextPaths = d.contextPaths(e, key)
		case "debug_final_answer":
			if d.present(key, e) && e.val.kind != kindBool && e.val.kind != kindString {
				d.typeError(key, e.val, "a boolean or a string")
				continue
			}
			d.keep(o, e)
		case "snapshot_storage":
			o.SnapshotStorage, _ = d.str(key, e)
		case "agent_temporary_workspace":
			o.AgentTemporaryWorkspace, _ = d.str(key, e)
		case "max_new_answers_global":
			if v, ok := d.integer(key, e, "a positive integer"); ok && v < 1 {
				d.fail(e.val.pos, key, fmt.Sprintf("max_new_answers_global must be 1 or more, got %d", v),
					"leave it out for no cap across the team")
			} else if ok {
				o.MaxNewAnswersGlobal = v
			}
		case "dspy":
			if _, ok := d.mapping(key, e, "a map"); ok {
				d.keep(o, e)
			}
		case "checklist_require_gap_report", "gap_report_mode":
			d.checklistKey(&o.Checklist, e, key)
		case "coordination_mode", "presenter_agent":
			d.decomposition(e, key)
		case "task_decomposer":
			d.taskDecomposer(e, key)
		case "skip_final_presentation":
			// v0.1.73's name for presenting no final answer: the winner's
			// answer is final (ui.enable_final_presentation: false, which
			// wins when the config has both: ui() runs after this).
			if b, ok := d.boolean(key, e); ok && b {
				c.UI.EnableFinalPresentation = new(false)
			}
		default:
			if spec, ok := orchestratorUpstream[e.key]; ok {
				if d.upstreamValue(e, key, spec) {
					d.extra(&o.Extra, e.key, e.val)
				}
				continue
			}
			if _, ok := placeholderKeys[key]; ok {
				if d.present(key, e) {
					d.placeholder(e, key, key)
				}
				continue
			}
			if slices.Contains(orchestratorKeys, e.key) {
				d.keep(o, e)
				continue
			}
			d.unknown(e, "orchestrator", orchestratorKeys)
		}
	}
}

// votingSensitivity reads voting_sensitivity. v0.1.73's values past
// lenient/balanced/strict load and vote by the nearest level this version
// implements (votingFallback), with a warning naming the feature; the value
// as written is kept in Extra for the feature that will read it. Anything
// else is returned as is, for Validate to refuse with the valid values.
func (d *decoder) votingSensitivity(e *pair, key, s string) string {
	level, ok := votingFallback[s]
	if !ok {
		return s
	}
	d.extra(&d.cfg.Orchestrator.Extra, e.key, e.val)
	if s == "checklist_gated" {
		// Implemented (coord's checklist gate); its prompt level is strict.
		d.cfg.Orchestrator.ChecklistGated = true
		return level
	}
	feature := s + " voting"
	switch {
	case s == "checklist_gated" || s == "checklist" || s == "checklist_scored":
		feature = "checklist voting (" + s + ")"
	case s == "sequential":
		feature = "sequential voting (strict, then balanced, then lenient)"
	}
	d.ignore(e.val.pos, key, "voting_sensitivity: "+s,
		fmt.Sprintf("voting_sensitivity '%s' is accepted, but this version does not support %s yet: agents vote by the '%s' rules", s, feature, level), "")
	return level
}

func (d *decoder) keep(o *Orchestrator, e *pair) {
	d.unsupported(e, join("orchestrator", e.key))
	if !e.val.isNull() {
		d.extra(&o.Extra, e.key, e.val)
	}
}

// orchestratorTimeout reads orchestrator.timeout. Upstream validates it and
// then ignores it (its CLI reads only timeout_settings); a user who wrote it
// meant it, so here it is honoured and wins over timeout_settings.
func (d *decoder) orchestratorTimeout(e *pair, key string) {
	m, ok := d.mapping(key, e, "a map with 'orchestrator_timeout_seconds'")
	if !ok {
		return
	}
	for _, t := range m.pairs {
		tkey := join(key, t.key)
		if t.key != "orchestrator_timeout_seconds" {
			d.unknown(t, key, orchestratorTimeoutKeys)
			continue
		}
		if v, ok := d.seconds(tkey, t, "1800"); ok {
			d.override("TimeoutSeconds", &d.cfg.Orchestrator.TimeoutSeconds, tkey, v)
		}
	}
}

// coordination reads orchestrator.coordination. Only the restart count is
// typed; the whole map is kept in Extra["coordination"] for the features
// (planning mode, task planning, skills) that will read it.
func (d *decoder) coordination(e *pair, key string) {
	m, ok := d.mapping(key, e, "a map")
	if !ok {
		return
	}
	o := &d.cfg.Orchestrator
	for _, t := range m.pairs {
		tkey := join(key, t.key)
		switch t.key {
		case "max_orchestration_restarts":
			if v, ok := d.integer(tkey, t, "a whole number (0 or more)"); ok {
				o.MaxOrchestrationRestarts = v
			}
		case "enable_planning_mode":
			o.PlanningMode, _ = d.boolean(tkey, t)
		case "checklist_criteria_inline":
			o.ChecklistCriteria = d.criteria(t, tkey)
		case "checklist_criteria_preset", "improvements":
			d.checklistKey(&o.Checklist, t, tkey)
		case "evaluation_criteria_generator":
			d.criteriaGenerator(t, tkey)
		case "persona_generator":
			d.personaGenerator(t, tkey)
		case "task_decomposer":
			d.taskDecomposer(t, tkey)
		case "write_mode", "drift_conflict_policy", "enable_changedoc", "fast_iteration_mode":
			d.isolation(&o.Isolation, t, tkey)
		case "planning_mode_instruction":
			o.PlanningInstruction, _ = d.str(tkey, t)
		case "compression_target_ratio":
			if v, ok := d.number(tkey, t, "a fraction between 0 and 1"); ok && (v <= 0 || v >= 1) {
				d.fail(t.val.pos, tkey, fmt.Sprintf("compression_target_ratio must be between 0 and 1, got %v", v),
					"e.g. 0.2 (the default): a fifth of a turn's messages survive a context overflow as they are")
			} else if ok {
				o.CompressionRatio = v
			}
		case "enable_agent_task_planning", "task_planning_filesystem_mode", "max_tasks_per_plan":
			d.taskPlanning(&o.Tasks, t, tkey)
		case "enable_subagents", "subagent_default_timeout", "subagent_min_timeout", "subagent_max_timeout",
			"subagent_max_concurrent", "subagent_types", "subagent_orchestrator", "background_subagents":
			d.subagents(&o.Subagents, t, tkey)
		case "use_two_tier_workspace":
			if _, ok := d.boolean(tkey, t); ok {
				d.unsupported(t, tkey)
			}
		case "enable_memory_filesystem_mode", "use_skills", "load_previous_session_skills",
			"disable_final_only_round_capture_fallback", "learning_capture_mode", "skills_directory", "massgen_skills":
			d.kit(&o.Kit, t, tkey)
		default:
			if spec, ok := coordinationUpstream[t.key]; ok {
				d.upstreamValue(t, tkey, spec)
				continue
			}
			d.unknown(t, key, coordinationKeys)
		}
	}
	d.extra(&o.Extra, "coordination", m)
}

func (d *decoder) ui(p *pair) {
	u := &d.cfg.UI
	m, ok := d.mapping("ui", p, "a map")
	if !ok {
		return
	}
	display, hasDisplay := d.str("ui.display_type", m.get("display_type"))
	if hasDisplay {
		u.DisplayType = d.displayValue(m.get("display_type"), "ui.display_type", display)
	}
	if tp := m.get("type"); tp != nil {
		// 18 upstream example configs write `type:`, which upstream silently
		// ignores. Reading it is what their authors meant.
		if hasDisplay || m.get("display_type") != nil {
			d.ignore(tp.keyPos, "ui.type", "type", "'type' is ignored because 'display_type' is set", "remove 'type'")
		} else if s, ok := d.str("ui.type", tp); ok {
			d.warnAt(tp.keyPos, "ui.type", "'type' is not a MassGen ui key (upstream ignores it); reading it as display_type",
				"rename it to 'display_type'")
			u.DisplayType = d.displayValue(tp, "ui.type", s)
			d.cfg.src["DisplayType"] = "ui.type"
		}
	}
	if b, ok := d.boolean("ui.logging_enabled", m.get("logging_enabled")); ok {
		u.LoggingEnabled = b
	}
	if b, ok := d.boolean("ui.use_orchestrator_for_single_agent", m.get("use_orchestrator_for_single_agent")); ok {
		u.UseOrchestratorForSingleAgent = b
	}
	if b, ok := d.boolean("ui.enable_final_presentation", m.get("enable_final_presentation")); ok {
		u.EnableFinalPresentation = &b
	}
	for _, k := range []string{"automation_mode", "debug"} {
		if _, ok := d.boolean(join("ui", k), m.get(k)); ok {
			d.unsupported(m.get(k), join("ui", k))
		}
	}
	// skip_agent_selector skips upstream's pick-an-agent prompt after a
	// run; massgen has none, so true is what happens anyway.
	d.boolean("ui.skip_agent_selector", m.get("skip_agent_selector"))
	for _, e := range m.pairs {
		if spec, ok := uiUpstream[e.key]; ok {
			d.upstreamValue(e, join("ui", e.key), spec)
			continue
		}
		if !slices.Contains(uiKeys, e.key) {
			d.unknown(e, "ui", uiKeys)
		}
	}
}

// displayValue maps a v0.1.73 display type onto massgen's displays, which
// the CLI picks from the value (internal/cli): textual_terminal (upstream's
// default), rich_terminal (deprecated upstream, which runs Textual for it),
// textual and rich are the full-screen terminal display where the terminal
// can show one; simple and terminal print plain progress lines; silent and
// none print nothing but the answer ("none" is read as silent). "web" is
// upstream's browser UI, which only its web server can drive: massgen's is
// `massgen serve`, so a run from the command line uses the default display,
// with a warning. Any other value is left for Validate to refuse.
func (d *decoder) displayValue(p *pair, key, v string) string {
	switch v {
	case "none":
		return "silent"
	case "web":
		d.ignore(p.val.pos, key, "display_type: web",
			"display type 'web' is upstream's browser UI, which its web server drives: this run uses the terminal display",
			"run `massgen serve` for massgen's HTTP interface, or use textual_terminal")
		return DefaultDisplayType
	}
	return v
}

// criteria reads coordination.checklist_criteria_inline: a list of
// {text, category, …} (category: primary, standard or stretch, or
// upstream's legacy must/should/could/core); other keys of an item
// (verify_by, anti_patterns, score_anchors) are accepted and not used.
func (d *decoder) criteria(p *pair, key string) []coord.Criterion {
	if !d.present(key, p) {
		return nil
	}
	if p.val.kind != kindSeq {
		d.typeError(key, p.val, "a list of {text, category}")
		return nil
	}
	var out []coord.Criterion
	for i, it := range p.val.items {
		ikey := fmt.Sprintf("%s[%d]", key, i)
		text := ""
		switch {
		case it.kind == kindString:
			text = it.s
		case it.kind == kindMap && it.get("text") != nil:
			text, _ = d.str(ikey+".text", it.get("text"))
		}
		if strings.TrimSpace(text) == "" {
			d.fail(it.pos, ikey, "a criterion needs a non-empty 'text'", "e.g. {text: \"The answer cites its sources\", category: standard}")
			continue
		}
		c := coord.Criterion{Text: text}
		if it.kind == kindMap {
			c.Category, _ = d.str(ikey+".category", it.get("category"))
			c.Category = coord.NormalCategory(c.Category)
		}
		out = append(out, c)
	}
	return out
}

// criteriaGenerator reads coordination.evaluation_criteria_generator:
// enabled, min_criteria, max_criteria. persist_across_turns (keeping the
// criteria for the next turn of a session) is not implemented and warns.
func (d *decoder) criteriaGenerator(p *pair, key string) {
	m, ok := d.mapping(key, p, "a map with 'enabled'")
	if !ok {
		return
	}
	o := &d.cfg.Orchestrator
	for _, e := range m.pairs {
		ekey := join(key, e.key)
		switch e.key {
		case "enabled":
			o.GenerateCriteria, _ = d.boolean(ekey, e)
		case "min_criteria", "max_criteria":
			v, ok := d.integer(ekey, e, "a positive integer")
			switch {
			case ok && v < 1:
				d.fail(e.val.pos, ekey, fmt.Sprintf("%s must be 1 or more, got %d", e.key, v), "e.g. 4 (min) or 10 (max)")
			case ok && e.key == "min_criteria":
				o.MinCriteria = v
			case ok:
				o.MaxCriteria = v
			}
		case "persist_across_turns":
			if b, ok := d.boolean(ekey, e); ok && b {
				d.ignore(e.keyPos, ekey, e.key, "'persist_across_turns' is accepted but ignored: each turn writes its own criteria", "")
			}
		default:
			d.unknown(e, key, []string{"enabled", "min_criteria", "max_criteria", "persist_across_turns"})
		}
	}
	if o.MinCriteria > 0 && o.MaxCriteria > 0 && o.MinCriteria > o.MaxCriteria {
		d.fail(m.pos, key, fmt.Sprintf("min_criteria (%d) is more than max_criteria (%d)", o.MinCriteria, o.MaxCriteria), "")
	}
}
