package config

import (
	"fmt"
	"maps"
	"slices"
)

// The keys below are upstream MassGen's (v0.1.73, the version massgen
// implements) for features this version does not implement yet. Each one
// loads, so that an upstream config reads unchanged, is type-checked as
// upstream checks it (an invalid enum value is an error, as it is there),
// and, unless its value asks for nothing, draws a warning that names the
// feature and is listed by IgnoredFeatures. Their values are kept in the
// Extra maps for the features that will read them.

// upstreamKey describes one such key.
type upstreamKey struct {
	kind    paramKind
	values  []string // the valid values of an enum (kind paramString)
	off     string   // a value that asks for nothing ("legacy", "none"), besides false/null/empty
	feature string   // "checklist-gated voting": what this version does not do yet
	hint    string   // what to do instead, where there is something
}

// Feature names shared by several keys.
const (
	featChecklist  = "this part of checklist-gated voting"
	featFairness   = "fairness caps"
	featMidstream  = "mid-stream peer updates"
	featSubagents  = "subagents"
	featBroadcast  = "broadcast questions (ask_others)"
	featPlanMode   = "plan mode"
	featCheckpoint = "checkpoints"
	featNLIP       = "NLIP"
	featCriteria   = "evolving checklist criteria (checklist_criteria_inline, checklist_criteria_preset and evaluation_criteria_generator work)"
	featRoundEval  = "round-evaluator subagents"
	featMultimodal = "multimodal tools"
	featPreCollab  = "pre-collaboration runs"
)

var (
	writeModes          = []string{"auto", "worktree", "isolated", "legacy"}
	finalAnswerStrats   = []string{"winner_reuse", "winner_present", "synthesize"}
	learningModes       = []string{"round", "verification_and_final_only", "final_only"}
	gapReportModes      = []string{"changedoc", "separate", "none"}
	coordinationModes   = []string{"voting", "decomposition"}
	noveltyInjections   = []string{"none", "gentle", "moderate", "aggressive"}
	pressures           = []string{"gentle", "balanced", "aggressive"}
	driftPolicies       = []string{"skip", "prefer_presenter", "fail"}
	subagentRuntimes    = []string{"isolated", "inherited"}
	planDepths          = []string{"dynamic", "shallow", "medium", "deep"}
	broadcastSensitives = []string{"low", "medium", "high"}
)

// orchestratorUpstream are the orchestrator keys upstream's CLI reads
// (cli.py _apply_orchestrator_runtime_params and the agent set-up) that
// this version does not act on yet.
var orchestratorUpstream = map[string]upstreamKey{
	"defer_voting_until_all_answered": {kind: paramBool, feature: "deferred voting (defer_voting_until_all_answered)"},
	// winner_present is what massgen does; winner_reuse is
	// ui.enable_final_presentation: false.
	"final_answer_strategy": {kind: paramString, values: finalAnswerStrats, off: "winner_present",
		feature: "final_answer_strategy", hint: "for winner_reuse, set skip_final_presentation: true"},
	// massgen accepts one checklist per answer set, as upstream's default 1 per round.
	"max_checklist_calls_per_round": {kind: paramInt, feature: featChecklist},
	"checklist_first_answer":        {kind: paramBool, feature: featChecklist},
	"skip_voting":                   {kind: paramBool, feature: "skipping the vote (skip_voting)"},
	"disable_injection":             {kind: paramBool, feature: "independent refinement (disable_injection)"},
	"enable_nlip":                   {kind: paramBool, feature: featNLIP},
	"nlip":                          {kind: paramMap, feature: featNLIP},
	"nlip_config":                   {kind: paramMap, feature: featNLIP},
	"docker":                        {kind: paramMap, feature: "keeping Docker containers between turns"},
	// inherited by every backend that does not set them (cli.py:2677)
	"enable_multimodal_tools":  {kind: paramBool, feature: featMultimodal},
	"multimodal_config":        {kind: paramMap, feature: featMultimodal},
	"image_generation_backend": {kind: paramString, feature: "image generation"},
	"image_generation_model":   {kind: paramString, feature: "image generation"},
	"video_generation_backend": {kind: paramString, feature: "video generation"},
	"video_generation_model":   {kind: paramString, feature: "video generation"},
	"audio_generation_backend": {kind: paramString, feature: "audio generation"},
	"audio_generation_model":   {kind: paramString, feature: "audio generation"},
}

// coordinationUpstream are the orchestrator.coordination keys of upstream's
// CoordinationConfig (cli.py _parse_coordination_config) this version does
// not act on yet.
var coordinationUpstream = map[string]upstreamKey{
	"broadcast":                               {kind: paramAny, off: "false", feature: featBroadcast},
	"broadcast_sensitivity":                   {kind: paramString, values: broadcastSensitives, feature: featBroadcast},
	"response_depth":                          {kind: paramString, feature: featBroadcast},
	"broadcast_timeout":                       {kind: paramNumber, feature: featBroadcast},
	"broadcast_wait_by_default":               {kind: paramBool, feature: featBroadcast},
	"max_broadcasts_per_agent":                {kind: paramInt, feature: featBroadcast},
	"evolving_criteria":                       {kind: paramBool, feature: featCriteria},
	"evolving_criteria_score_threshold":       {kind: paramNumber, feature: featCriteria},
	"evolving_criteria_max_evolutions":        {kind: paramInt, feature: featCriteria},
	"evolving_criteria_min_high_score_count":  {kind: paramInt, feature: featCriteria},
	"evolving_criteria_timeout":               {kind: paramNumber, feature: featCriteria},
	"prompt_improver":                         {kind: paramMap, feature: "prompt improvement"},
	"pre_collab_voting_threshold":             {kind: paramInt, feature: featPreCollab},
	"subagent_round_timeouts":                 {kind: paramMap, feature: featSubagents},
	"subagent_runtime_mode":                   {kind: paramString, values: subagentRuntimes, feature: featSubagents},
	"subagent_runtime_fallback_mode":          {kind: paramString, feature: featSubagents},
	"subagent_host_launch_prefix":             {kind: paramAny, feature: featSubagents},
	"round_evaluator_before_checklist":        {kind: paramBool, feature: featRoundEval},
	"orchestrator_managed_round_evaluator":    {kind: paramBool, feature: featRoundEval},
	"round_evaluator_skip_synthesis":          {kind: paramBool, feature: featRoundEval},
	"round_evaluator_refine":                  {kind: paramBool, feature: featRoundEval},
	"round_evaluator_transformation_pressure": {kind: paramString, values: pressures, feature: featRoundEval},
	"enable_execution_trace_analyzer":         {kind: paramBool, feature: "execution trace analysis"},
	"auto_trace_analysis":                     {kind: paramBool, feature: "execution trace analysis"},
	"enable_evaluator_personas":               {kind: paramBool, feature: featChecklist},
	"enable_quality_rethink_on_iteration":     {kind: paramBool, feature: featChecklist},
	"enable_novelty_on_iteration":             {kind: paramBool, feature: featChecklist},
	"novelty_injection":                       {kind: paramString, values: noveltyInjections, off: "none", feature: featChecklist},
	"resume_from_log":                         {kind: paramMap, feature: "resuming from a log (resume_from_log)"},
	"checkpoint_enabled":                      {kind: paramBool, feature: featCheckpoint},
	"checkpoint_mode":                         {kind: paramString, values: []string{"conversation", "task"}, feature: featCheckpoint},
	"checkpoint_guidance":                     {kind: paramString, feature: featCheckpoint},
	"checkpoint_gated_patterns":               {kind: paramStringList, feature: featCheckpoint},
	"web_review":                              {kind: paramBool, feature: "the web review of changes"},
	"plan_depth":                              {kind: paramString, values: planDepths, feature: featPlanMode},
	"plan_thoroughness":                       {kind: paramAny, feature: featPlanMode},
	"plan_target_steps":                       {kind: paramInt, feature: featPlanMode},
	"plan_target_chunks":                      {kind: paramInt, feature: featPlanMode},
}

// agentUpstream are the agent-level keys upstream's CLI reads besides id,
// backend, system_message and memory.
var agentUpstream = map[string]upstreamKey{
	"voting_sensitivity": {kind: paramString, values: votingValues, feature: "per-agent voting sensitivity"},
	"main_agent":         {kind: paramBool, feature: featCheckpoint},
	"subagent_agents":    {kind: paramAny, feature: featSubagents},
	"enable_nlip":        {kind: paramBool, feature: featNLIP},
	"nlip":               {kind: paramMap, feature: featNLIP},
	"nlip_config":        {kind: paramMap, feature: featNLIP},
}

// uiUpstream are the ui keys of v0.1.73 this version does not act on.
var uiUpstream = map[string]upstreamKey{
	"theme":          {kind: paramString, feature: "display themes"},
	"display_kwargs": {kind: paramMap, feature: "display options (display_kwargs)"},
}

// topLevelUpstream are top-level keys upstream reads besides the sections.
var topLevelUpstream = map[string]upstreamKey{
	"checkpoint": {kind: paramMap, feature: featCheckpoint},
	"nlip":       {kind: paramMap, feature: featNLIP},
}

// deferLoading is a custom tool's or MCP server's defer_loading, part of
// upstream's Claude tool search.
var deferLoading = upstreamKey{kind: paramBool, feature: "Claude tool search (defer_loading)"}

// placeholderKeys are keys upstream's example configs write but upstream
// itself never reads (its behaviour notes call them placeholders): they
// load, with a warning that says so, since a user who wrote one expected
// something. Keyed by path, as the same name means other things elsewhere;
// the value is the hint.
var placeholderKeys = map[string]string{
	"display":                       "its settings belong under 'ui:' (display_type, logging_enabled)",
	"task":                          "give the question on the command line",
	"orchestrator.type":             "",
	"orchestrator.max_turns":        "",
	"orchestrator.skills_directory": "upstream reads it under orchestrator.coordination",
	"agent.append_system_prompt":    "append the text to the agent's system_message",
}

// upstreamKeyNames lists a spec table's keys, sorted, for the key tables.
func upstreamKeyNames(m map[string]upstreamKey) []string { return slices.Sorted(maps.Keys(m)) }

// upstreamFeature names the feature of a key of any spec table.
func upstreamFeature(key string) (string, bool) {
	for _, m := range []map[string]upstreamKey{orchestratorUpstream, coordinationUpstream, agentUpstream, uiUpstream, topLevelUpstream} {
		if s, ok := m[key]; ok {
			return s.feature, true
		}
	}
	return "", false
}

// upstreamValue checks a key of a spec table and warns that its feature is
// not implemented, unless its value asks for nothing. It reports whether the
// value is valid (and so kept).
func (d *decoder) upstreamValue(e *pair, key string, s upstreamKey) bool {
	if !d.present(key, e) {
		return false
	}
	if !s.kind.accepts(e.val) {
		d.typeError(key, e.val, s.kind.want())
		return false
	}
	if s.values != nil && !slices.Contains(s.values, e.val.s) {
		d.fail(e.val.pos, key, fmt.Sprintf("invalid %s '%s'", e.key, e.val.s), oneOf(e.val.s, s.values))
		return false
	}
	if turnsOff(e.val) || (s.off != "" && scalarText(e.val) == s.off) {
		return true
	}
	if en := e.val.get("enabled"); e.val.kind == kindMap && en != nil && en.val.kind == kindBool && !en.val.b {
		return true // {enabled: false, …}: a sub-feature's settings, switched off
	}
	what := e.key
	if e.val.kind == kindString && s.values != nil {
		what = fmt.Sprintf("%s: %s", e.key, e.val.s)
	}
	d.ignore(e.keyPos, key, e.key, fmt.Sprintf("'%s' is accepted but ignored: this version does not support %s yet", what, s.feature), s.hint)
	return true
}

// placeholder warns about a key upstream does not read either.
func (d *decoder) placeholder(e *pair, key, generic string) {
	d.ignore(e.keyPos, key, e.key, fmt.Sprintf("'%s' has no effect: upstream MassGen does not read it either", e.key), placeholderKeys[generic])
}
