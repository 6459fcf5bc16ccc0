package config

import (
	"time"

	"github.com/massgen/massgen/internal/coord"
)

// Config is a loaded, validated MassGen configuration.
type Config struct {
	Path         string // file it was loaded from ("" when built in code)
	Agents       []Agent
	Orchestrator Orchestrator
	UI           UI
	Raw          []byte       // the file's bytes as read (for execution_metadata)
	Warnings     []Diagnostic // accepted-with-warning issues (unknown keys etc.)
	// Extra holds known top-level keys this package does not interpret
	// (memory, session_id, hooks), as plain values, so later features can read them.
	Extra map[string]any

	// Source positions, so that Validate can point at the file even when it
	// runs after Parse. Empty for configs built in code.
	loc map[string]pos
	// Key paths that already drew a type error while decoding; Validate skips
	// them so one mistake yields one message.
	bad map[string]bool
	// src maps a typed field that several keys can set (timeouts) to the key
	// path it was actually read from, so messages name the right key.
	src map[string]string
	// ignored lists the settings a run will not act on (IgnoredFeatures).
	ignored []ignoredSetting
	// single is true for the `agent:` form, whose key paths have no index.
	single bool
	// agentPaths[i] is the key path of Agents[i] ("agents[2]"); entries that
	// failed to decode leave gaps in Agents, so the index alone is not enough.
	agentPaths []string
}

// Agent is one entry of `agents:` (or the single `agent:` map).
type Agent struct {
	ID            string // required in `agents:`; defaults to "agent" for `agent:`
	SystemMessage string
	Backend       Backend
	Line          int // source line of the agent entry
	// VotingSensitivity is the agent's own voting_sensitivity, "" for the
	// orchestrator's: checklist_gated gates this agent's votes (or, set to
	// another value, exempts it from the orchestrator's checklist_gated).
	VotingSensitivity string
	// Subtask is the agent's subtask in decomposition mode.
	Subtask string
	// Extra holds known agent keys not interpreted here (memory).
	Extra map[string]any
}

// Backend describes the model an agent talks to.
type Backend struct {
	Type   string // inferred from Model with provider.InferType when absent
	Model  string // "sim" by default for type sim
	APIKey string // explicit api_key after ${VAR} expansion; "" means from env later
	// APIKeyUnsetVar names the variable(s) api_key referred to (${VAR})
	// that were unset. A run must refuse such a backend rather than fall
	// back to the provider's usual variable: the config asked for a
	// specific key, and using another one bills someone else.
	APIKeyUnsetVar string
	BaseURL        string
	Stream         bool // default true; `stream: false` for servers that cannot stream tool calls
	// Params are provider parameters passed through verbatim (temperature,
	// top_p, max_tokens, reasoning, text, extra_body, ...; see params.go for
	// which keys get here). Null values are dropped, as upstream does before
	// calling the provider.
	Params map[string]any
	// Extra holds keys massgen owns but that are not provider parameters
	// (cwd, mcp_servers, enable_web_search, context_paths, ...), as plain
	// values, for the features that will use them.
	Extra map[string]any
	// CLI holds the settings of a coding-agent CLI backend (claude_code,
	// codex, gemini_cli) that are neither massgen's nor an API's: the
	// CLI's own (permission_mode, max_turns, approval_mode, …), as plain
	// values. Its vendor (internal/agent/cli) reads them and names those it
	// has no equivalent for.
	CLI map[string]any
	// CustomTools are the backend's `custom_tools:` (customtools.go).
	CustomTools []CustomTool
	// MCPServers are the backend's `mcp_servers:` (mcp.go); AllowedTools
	// and ExcludeTools filter their tools for this agent (bare or
	// mcp__server__tool names).
	MCPServers                 []MCPServer
	AllowedTools, ExcludeTools []string
	// Cwd is set when the agent has a workspace (`cwd:`). A run gives the
	// agent a fresh directory of its own (internal/app), named after it.
	Cwd string
	// WorkspaceMaxMB (workspace_max_size_mb, massgen's own) bounds what
	// the workspace may hold; 0 is the default.
	WorkspaceMaxMB int
	// ContextPaths are the backend's own context_paths: this agent's, on
	// top of the orchestrator's.
	ContextPaths []ContextPath
	// CommandLine is set by enable_mcp_command_line: true (workspace.go).
	CommandLine *CommandLine
	Sim         *SimBackend // non-nil only for type sim
	Line        int         // source line of the `backend:` key
	// RequestsPerMinute and TokensPerMinute pace requests to this provider
	// model, shared by every agent on it (0 = no limit).
	RequestsPerMinute int
	TokensPerMinute   int
	// WorkflowActions (workflow_actions, massgen's own) is how the
	// workflow actions are asked of the model: native (tools), auto,
	// json_schema or text (internal/agent/toolless); "" is the default
	// for the backend (auto for local servers).
	WorkflowActions string
}

// SimBackend configures `type: sim`, the built-in simulator. Keys inside the
// backend map: scenario (path, relative to the config file's directory),
// ttft_ms (int) and tokens_per_second (number); zero means the simulator's
// own default.
type SimBackend struct {
	Scenario        string         // path of a scenario file
	Inline          map[string]any // or the scenario itself, written in the config
	TTFTMillis      int
	TokensPerSecond float64
}

// Orchestrator holds the coordination settings (DESIGN.md §2).
type Orchestrator struct {
	VotingSensitivity     string // lenient (default) | balanced | strict
	AnswerNovelty         string // answer_novelty_requirement: lenient (default) | balanced | strict
	MaxNewAnswersPerAgent int    // default 5 when absent; 0 with UnlimitedAnswers for explicit null
	UnlimitedAnswers      bool
	// TimeoutSeconds bounds the whole run (default 1800). It is read from
	// timeout_settings.orchestrator_timeout_seconds (what upstream's CLI reads)
	// and then from orchestrator.timeout.orchestrator_timeout_seconds (what
	// upstream validates but ignores); the more specific orchestrator key wins.
	TimeoutSeconds float64
	// AgentTurnTimeoutSeconds bounds one turn (default 600); from
	// timeout_settings.agent_turn_timeout_seconds, overridden by
	// orchestrator.agent_turn_timeout_seconds.
	AgentTurnTimeoutSeconds float64
	// PresentationGraceSeconds is how long the final presentation may run
	// past the run deadline (timeout_settings.presentation_grace_seconds);
	// 0 means coord.DefaultPresentationGrace, or the run's timeout when that
	// is shorter (Settings).
	PresentationGraceSeconds float64
	// FirstRoundTimeoutSeconds, LaterRoundTimeoutSeconds and
	// RoundGraceSeconds are timeout_settings' per-round timeouts
	// (initial_round_timeout_seconds, subsequent_round_timeout_seconds:
	// 0 = no limit; round_timeout_grace_seconds: 0 = the default, 120).
	FirstRoundTimeoutSeconds float64
	LaterRoundTimeoutSeconds float64
	RoundGraceSeconds        float64
	MaxOrchestrationRestarts int    // coordination.max_orchestration_restarts, default 0
	RestartPolicy            string // restart (default) | inject
	IndependentFirstAnswer   bool   // default true
	// MaxCostUSD and MaxTotalTokens stop coordination once the run has spent
	// that much and present the best answer so far (0 = no limit).
	MaxCostUSD     float64
	MaxTotalTokens int64
	// WaitForFirstAnswers holds an agent's next turn while another agent is
	// still writing its independent first answer (restart policy): that
	// answer would cancel the turn anyway. Default true.
	WaitForFirstAnswers bool
	FailureBudget       int // max_consecutive_failures, default 3
	// FairnessEnabled and FairnessLeadCap are fairness_enabled (default
	// true, as in upstream v0.1.73) and fairness_lead_cap_answers (0 means
	// coord.DefaultFairnessLeadCap, 2).
	FairnessEnabled bool
	FairnessLeadCap int
	// MaxNewAnswersGlobal is max_new_answers_global: the new answers of all
	// agents together (0: no cap).
	MaxNewAnswersGlobal int
	// ChecklistGated is voting_sensitivity: checklist_gated (VotingSensitivity
	// is then strict, the prompt level nearest to it); VotingThreshold is
	// voting_threshold (0: coord.DefaultThreshold); ChecklistCriteria are
	// coordination.checklist_criteria_inline (none: coord.DefaultCriteria).
	ChecklistGated    bool
	VotingThreshold   int
	ChecklistCriteria []coord.Criterion
	// Checklist are the report gate, draft_approach's floors and the
	// criteria preset (checklist.go).
	Checklist ChecklistKeys
	// Personas is coordination.persona_generator when enabled (nil: off).
	Personas *PersonaGenerator
	// Decomposition is coordination_mode: decomposition and its keys (decompose.go).
	Decomposition Decomposition
	// GenerateCriteria, MinCriteria and MaxCriteria are
	// coordination.evaluation_criteria_generator's enabled, min_criteria and
	// max_criteria (0: 4 and 10).
	GenerateCriteria         bool
	MinCriteria, MaxCriteria int
	// MaxMidstreamInjections, DeferPeerUpdates and
	// NoUpdatesBeforeChecklist are max_midstream_injections_per_round (0:
	// coord.DefaultMaxInjections), defer_peer_updates_until_restart and
	// allow_midstream_peer_updates_before_checklist_submit: false.
	MaxMidstreamInjections   int
	DeferPeerUpdates         bool
	NoUpdatesBeforeChecklist bool
	SkipCoordinationRounds   bool
	ContextPaths             []ContextPath
	// Isolation is write_mode and drift_conflict_policy (each round writes
	// its own copy of the write context paths), enable_changedoc and
	// fast_iteration_mode.
	Isolation Isolation
	// SnapshotStorage and AgentTemporaryWorkspace are where the snapshots
	// of workspaces and each agent's read-only view of the others' go
	// (relative: under .massgen/; "" takes .massgen/snapshots and
	// .massgen/temp_workspaces). Each run gets its own directory inside.
	SnapshotStorage, AgentTemporaryWorkspace string
	// PlanningMode blocks the tools that change the world during
	// coordination (coordination.enable_planning_mode); PlanningInstruction
	// (coordination.planning_mode_instruction) replaces the default note.
	PlanningMode        bool
	PlanningInstruction string
	// CompressionRatio is coordination.compression_target_ratio: the share
	// of a turn's own messages kept as they are when a context overflow
	// has the rest summarised (0: agent.DefaultCompressionRatio, 0.20).
	CompressionRatio float64
	// Kit is v0.1.73's working kit of the agents: filesystem memory and
	// skills (internal/kit).
	Kit Kit
	// Tasks is task planning: enable_agent_task_planning,
	// task_planning_filesystem_mode, max_tasks_per_plan (internal/kit/tasks).
	Tasks TaskPlanning
	// Subagents are the subagent keys (internal/subagent).
	Subagents Subagents
	// StreamIdleTimeoutSeconds fails a model request whose response sends
	// no byte for this long; from timeout_settings.stream_idle_timeout_seconds.
	// 0 means the default, 60 (llm.DefaultIdleTimeout).
	StreamIdleTimeoutSeconds float64
	// Extra holds the other known upstream keys as plain values
	// (snapshot_storage, agent_temporary_workspace, dspy, debug_final_answer,
	// and the whole `coordination` map under "coordination").
	Extra map[string]any
}

// Kit holds orchestrator.coordination's keys of filesystem memory and
// skills (internal/kit/memory, internal/kit/skills).
type Kit struct {
	Memory bool // enable_memory_filesystem_mode
	// LearningCapture is learning_capture_mode: round ("" too),
	// verification_and_final_only or final_only; NoCaptureFallback is
	// disable_final_only_round_capture_fallback.
	LearningCapture   string
	NoCaptureFallback bool
	UseSkills         bool     // use_skills
	SkillsDirectory   string   // skills_directory ("" is .agent/skills)
	MassgenSkills     []string // massgen_skills: the shipped skills to offer (none: all)
	PreviousSkills    bool     // load_previous_session_skills
}

// ContextPath is a file or directory shared with the agents.
type ContextPath struct {
	Path           string
	Permission     string // read (default) | write
	ProtectedPaths []string
}

// UI holds display settings.
type UI struct {
	DisplayType                   string // textual_terminal (default) | rich_terminal | simple | terminal | silent | textual | rich (displayValue)
	LoggingEnabled                bool   // default true
	UseOrchestratorForSingleAgent bool   // default true; false: a one-agent team answers in one plain call
	// EnableFinalPresentation: nil presents unless the team is one agent;
	// true always presents; false never does (the winning answer is final).
	EnableFinalPresentation *bool
}

// Defaults. They live here, not in the orchestrator, so that `massgen
// --validate` and a run agree on what an absent key means.
const (
	DefaultSensitivity        = "lenient"
	DefaultNovelty            = "lenient"
	DefaultMaxNewAnswers      = coord.DefaultMaxAnswers // DESIGN.md: bounded so a rewriting team converges
	DefaultTimeoutSeconds     = float64(coord.DefaultTimeout / time.Second)
	DefaultTurnTimeoutSeconds = float64(coord.DefaultTurnTimeout / time.Second)
	DefaultRestartPolicy      = "restart"
	DefaultFailureBudget      = coord.DefaultFailureBudget
	DefaultDisplayType        = "textual_terminal" // v0.1.73's default
	DefaultSingleAgentID      = "agent"
	DefaultSimModel           = "sim"
	DefaultContextPermission  = "read"
)

// DefaultOrchestrator returns the orchestrator settings used when a config
// has no `orchestrator:` section.
func DefaultOrchestrator() Orchestrator {
	return Orchestrator{
		VotingSensitivity:       DefaultSensitivity,
		AnswerNovelty:           DefaultNovelty,
		MaxNewAnswersPerAgent:   DefaultMaxNewAnswers,
		TimeoutSeconds:          DefaultTimeoutSeconds,
		AgentTurnTimeoutSeconds: DefaultTurnTimeoutSeconds,
		RestartPolicy:           DefaultRestartPolicy,
		IndependentFirstAnswer:  true,
		WaitForFirstAnswers:     true,
		FailureBudget:           DefaultFailureBudget,
		FairnessEnabled:         true,
	}
}

// DefaultUI returns the UI settings used when a config has no `ui:` section.
func DefaultUI() UI {
	return UI{DisplayType: DefaultDisplayType, LoggingEnabled: true, UseOrchestratorForSingleAgent: true}
}

// New builds a config in code with every default applied, for quick mode
// (`--model NAME`) and library use. Backends built in code must set Stream
// themselves: its zero value (false) cannot be told apart from `stream: false`.
func New(agents ...Agent) *Config {
	return &Config{Agents: agents, Orchestrator: DefaultOrchestrator(), UI: DefaultUI()}
}

// pos is a 1-based source position.
type pos struct{ line, col int }
