package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultsWhenKeysAreAbsent(t *testing.T) {
	cfg := parseOK(t, oneAgent, nil)
	o := cfg.Orchestrator
	checks := []struct {
		name      string
		got, want any
	}{
		{"voting sensitivity", o.VotingSensitivity, "lenient"},
		{"answer novelty", o.AnswerNovelty, "lenient"},
		{"max new answers", o.MaxNewAnswersPerAgent, 5},
		{"unlimited answers", o.UnlimitedAnswers, false},
		{"run timeout", o.TimeoutSeconds, 1800.0},
		{"turn timeout", o.AgentTurnTimeoutSeconds, 600.0},
		{"orchestration restarts", o.MaxOrchestrationRestarts, 0},
		{"restart policy", o.RestartPolicy, "restart"},
		{"independent first answer", o.IndependentFirstAnswer, true},
		{"failure budget", o.FailureBudget, 3},
		{"skip coordination", o.SkipCoordinationRounds, false},
		{"display type", cfg.UI.DisplayType, "textual_terminal"},
		{"logging", cfg.UI.LoggingEnabled, true},
		{"orchestrator for single agent", cfg.UI.UseOrchestratorForSingleAgent, true},
		{"stream", cfg.Agents[0].Backend.Stream, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("unexpected warnings:%s", dump(cfg.Warnings))
	}
}

func TestOrchestratorSettingsAreRead(t *testing.T) {
	cfg := parseOK(t, oneAgent+`orchestrator:
  voting_sensitivity: strict
  answer_novelty_requirement: balanced
  max_new_answers_per_agent: 2
  agent_turn_timeout_seconds: 120
  restart_policy: inject
  independent_first_answer: false
  wait_for_first_answers: false
  max_consecutive_failures: 5
  skip_coordination_rounds: true
  snapshot_storage: snapshots
  coordination:
    max_orchestration_restarts: 2
    enable_planning_mode: true
  context_paths:
    - path: /src
      permission: write
      protected_paths: [secrets]
    - path: /docs
ui:
  display_type: silent
  logging_enabled: false
  use_orchestrator_for_single_agent: false
  enable_final_presentation: false
stream: 1
`, nil)
	want := Orchestrator{
		VotingSensitivity: "strict", AnswerNovelty: "balanced", MaxNewAnswersPerAgent: 2,
		TimeoutSeconds: 1800, AgentTurnTimeoutSeconds: 120, MaxOrchestrationRestarts: 2,
		RestartPolicy: "inject", IndependentFirstAnswer: false, FailureBudget: 5, SkipCoordinationRounds: true,
		FairnessEnabled: true,
		ContextPaths: []ContextPath{
			{Path: "/src", Permission: "write", ProtectedPaths: []string{"secrets"}},
			{Path: "/docs", Permission: "read"},
		},
		SnapshotStorage: "snapshots", PlanningMode: true,
		Extra: map[string]any{
			"coordination": map[string]any{"max_orchestration_restarts": 2, "enable_planning_mode": true},
		},
	}
	if diff := cmp.Diff(want, cfg.Orchestrator); diff != "" {
		t.Errorf("Orchestrator (-want +got):\n%s", diff)
	}
	no := false
	if diff := cmp.Diff(UI{DisplayType: "silent", EnableFinalPresentation: &no}, cfg.UI); diff != "" {
		t.Errorf("UI (-want +got):\n%s", diff)
	}
	if _, ok := find(cfg.Warnings, "stream", Warning); !ok {
		t.Errorf("top-level 'stream' should warn as unknown; got:%s", dump(cfg.Warnings))
	}
}

func TestMaxNewAnswersNullMeansUnlimited(t *testing.T) {
	cfg := parseOK(t, oneAgent+"orchestrator:\n  max_new_answers_per_agent: null\n", nil)
	if o := cfg.Orchestrator; o.MaxNewAnswersPerAgent != 0 || !o.UnlimitedAnswers {
		t.Errorf("got max=%d unlimited=%v, want 0 and true", o.MaxNewAnswersPerAgent, o.UnlimitedAnswers)
	}
	cfg = parseOK(t, oneAgent+"orchestrator:\n  max_new_answers_per_agent:\n", nil)
	if !cfg.Orchestrator.UnlimitedAnswers {
		t.Error("an empty value (YAML null) should also mean unlimited")
	}
}

// Both timeout keys are read; orchestrator.timeout (ignored upstream) wins
// over timeout_settings, with a warning when they disagree.
func TestTimeoutKeys(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		run, turn float64
		warnKey   string
	}{
		{"timeout_settings only", "timeout_settings:\n  orchestrator_timeout_seconds: 30\n  agent_turn_timeout_seconds: 10\n", 30, 10, ""},
		{"orchestrator.timeout only", "orchestrator:\n  timeout: {orchestrator_timeout_seconds: 45.5}\n", 45.5, 600, ""},
		{"both, orchestrator wins",
			"timeout_settings: {orchestrator_timeout_seconds: 30, agent_turn_timeout_seconds: 10}\n" +
				"orchestrator:\n  timeout: {orchestrator_timeout_seconds: 90}\n  agent_turn_timeout_seconds: 20\n",
			90, 20, "orchestrator.timeout.orchestrator_timeout_seconds"},
		{"both equal, no warning",
			"timeout_settings: {orchestrator_timeout_seconds: 30}\norchestrator: {timeout: {orchestrator_timeout_seconds: 30}}\n",
			30, 600, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := parseOK(t, oneAgent+tc.src, nil)
			if got := cfg.Orchestrator.TimeoutSeconds; got != tc.run {
				t.Errorf("TimeoutSeconds = %v, want %v", got, tc.run)
			}
			if got := cfg.Orchestrator.AgentTurnTimeoutSeconds; got != tc.turn {
				t.Errorf("AgentTurnTimeoutSeconds = %v, want %v", got, tc.turn)
			}
			_, warned := find(cfg.Warnings, tc.warnKey, Warning)
			if (tc.warnKey != "") != warned || (tc.warnKey == "" && len(cfg.Warnings) > 0) {
				t.Errorf("warnings = %s; want one for %q", dump(cfg.Warnings), tc.warnKey)
			}
		})
	}
	// A bad value is reported under the key it came from.
	ds := diagnose(t, oneAgent+"timeout_settings: {agent_turn_timeout_seconds: 0}\n", nil)
	if _, ok := find(ds, "timeout_settings.agent_turn_timeout_seconds", Error); !ok {
		t.Errorf("zero turn timeout in timeout_settings not reported there:%s", dump(ds))
	}
}

func TestSingleAgentForm(t *testing.T) {
	cfg := parseOK(t, "agent:\n  backend:\n    type: gemini\n    model: gemini-2.5-flash\n  system_message: You are terse.\n", nil)
	if len(cfg.Agents) != 1 {
		t.Fatalf("got %d agents", len(cfg.Agents))
	}
	a := cfg.Agents[0]
	if a.ID != "agent" || a.SystemMessage != "You are terse." || a.Line != 2 || a.Backend.Line != 2 {
		t.Errorf("agent = %+v", a)
	}
	ds := diagnose(t, "agent:\n  id: solo\n  backend: {type: gemni, model: gemini-2.5-flash}\n", nil)
	if d, ok := find(ds, "agent.backend.type", Error); !ok || d.Line != 3 || d.Suggestion != "did you mean 'gemini'?" {
		t.Errorf("single-agent key paths have no index; got:%s", dump(ds))
	}
}

func TestJSONConfig(t *testing.T) {
	src := `{
  "agents": [
    {"id": "a", "backend": {"type": "claude", "model": "claude-3-5-haiku", "temperature": 0.2}},
    {"id": "b", "backend": {"type": "grok", "model": "grok-3-mini", "enable_web_search": true}}
  ],
  "orchestrator": {"voting_sensitivity": "balanced"}
}`
	cfg := parseOK(t, src, nil)
	if len(cfg.Agents) != 2 || cfg.Agents[1].ID != "b" || cfg.Agents[1].Line != 4 {
		t.Fatalf("agents = %+v", cfg.Agents)
	}
	if got := cfg.Agents[0].Backend.Params["temperature"]; got != 0.2 {
		t.Errorf("temperature = %v", got)
	}
	if cfg.Orchestrator.VotingSensitivity != "balanced" {
		t.Errorf("sensitivity = %q", cfg.Orchestrator.VotingSensitivity)
	}
	ds := diagnose(t, `{"agents": [{"id": "a", "backend": {"type": "opnai", "model": "gpt-4o"}}]}`, nil)
	if d, ok := find(ds, "agents[0].backend.type", Error); !ok || d.Line != 1 || d.Col != 45 {
		t.Errorf("JSON errors are located too; got:%s", dump(ds))
	}
}

// Provider parameters pass through verbatim; keys massgen owns stay out of
// Params (so they never reach a provider) and are kept in Extra.
func TestBackendParamsAndExtra(t *testing.T) {
	cfg := parseOK(t, `agents:
  - id: a
    backend:
      type: openai
      model: gpt-5
      api_key: sk-test
      base_url: https://example.test/v1
      stream: false
      temperature: 0.7
      top_p: 1
      max_tokens: 3000
      reasoning: {effort: high, summary: auto}
      text: {verbosity: medium}
      extra_body:
        chat_template_kwargs: {enable_thinking: true}
      seed: null
      cwd: workspace1
      enable_web_search: yes
      enable_code_interpreter: true
      enable_image_generation: false
      command_line_execution_mode: docker
      allowed_tools: [read_file]
      mcp_servers: {fs: {type: stdio, command: npx}}
      upload_files:
`, nil)
	b := cfg.Agents[0].Backend
	if b.Type != "openai" || b.Model != "gpt-5" || b.APIKey != "sk-test" || b.BaseURL != "https://example.test/v1" || b.Stream || b.Line != 3 {
		t.Errorf("typed fields = %+v", b)
	}
	wantParams := map[string]any{
		"temperature": 0.7, "top_p": 1, "max_tokens": 3000,
		"reasoning":  map[string]any{"effort": "high", "summary": "auto"},
		"text":       map[string]any{"verbosity": "medium"},
		"extra_body": map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": true}},
	}
	if diff := cmp.Diff(wantParams, b.Params); diff != "" {
		t.Errorf("Params (-want +got):\n%s", diff)
	}
	wantExtra := map[string]any{
		"cwd": "workspace1", "enable_web_search": true, "enable_code_interpreter": true,
		"enable_image_generation": false, "command_line_execution_mode": "docker",
	}
	if diff := cmp.Diff(wantExtra, b.Extra); diff != "" {
		t.Errorf("Extra (-want +got):\n%s", diff)
	}
	// The MCP keys have typed fields (mcp.go).
	if len(b.MCPServers) != 1 || b.MCPServers[0].Name != "fs" || b.MCPServers[0].Command != "npx" || b.MCPServers[0].Type != "stdio" ||
		!slices.Equal(b.AllowedTools, []string{"read_file"}) {
		t.Errorf("MCPServers = %+v, AllowedTools = %v", b.MCPServers, b.AllowedTools)
	}
	if b.Sim != nil {
		t.Error("Sim set for an openai backend")
	}
}

func TestTypeInferredFromModel(t *testing.T) {
	cfg := parseOK(t, `agents:
  - {id: a, backend: {model: gpt-4o}}
  - {id: b, backend: {model: claude-sonnet-4}}
  - {id: c, backend: {model: sim}}
`, nil)
	for i, want := range []string{"openai", "claude", "sim"} {
		if got := cfg.Agents[i].Backend.Type; got != want {
			t.Errorf("agent %d type = %q, want %q", i, got, want)
		}
	}
}

func TestSimBackend(t *testing.T) {
	dir := t.TempDir()
	src := "agents:\n  - id: s\n    backend:\n      type: sim\n      scenario: scenarios/fast.yaml\n      ttft_ms: 50\n      tokens_per_second: 200\n"
	cfg, err := Parse([]byte(src), filepath.Join(dir, "cfg.yaml"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.Agents[0].Backend
	want := &SimBackend{Scenario: filepath.Join(dir, "scenarios/fast.yaml"), TTFTMillis: 50, TokensPerSecond: 200}
	if diff := cmp.Diff(want, b.Sim); diff != "" {
		t.Errorf("Sim (-want +got):\n%s", diff)
	}
	if b.Model != "sim" || len(b.Params) != 0 {
		t.Errorf("model = %q params = %v; want model defaulted to sim and no params", b.Model, b.Params)
	}
	ds := diagnose(t, "agents:\n  - id: s\n    backend: {type: sim, ttft_ms: -1}\n", nil)
	if _, ok := find(ds, "agents[0].backend.ttft_ms", Error); !ok {
		t.Errorf("negative ttft_ms not reported:%s", dump(ds))
	}
}

func TestEnvExpansion(t *testing.T) {
	env := map[string]string{"MODEL": "gpt-4o", "KEY": "sk-env", "TEMP_NAME": "temp"}
	cfg := parseOK(t, `agents:
  - id: a
    system_message: "Workspace is ${cwd}; model ${MODEL}"
    backend:
      type: openai
      model: ${MODEL}
      api_key: ${KEY}
      base_url: ${BASE_URL:-http://localhost:8000/v1}
      extra_body: {tag: "${MODEL}-${TEMP_NAME}"}
  - id: b
    backend: {type: openai, model: gpt-4o, api_key: "${UNSET_KEY}"}
`, env)
	a, b := cfg.Agents[0], cfg.Agents[1]
	if a.Backend.Model != "gpt-4o" || a.Backend.APIKey != "sk-env" || a.Backend.BaseURL != "http://localhost:8000/v1" {
		t.Errorf("backend = %+v", a.Backend)
	}
	if got := a.Backend.Params["extra_body"].(map[string]any)["tag"]; got != "gpt-4o-temp" {
		t.Errorf("nested param = %v", got)
	}
	if a.SystemMessage != "Workspace is ${cwd}; model gpt-4o" {
		t.Errorf("system message = %q (${cwd} is kept for the workspace)", a.SystemMessage)
	}
	// An unset api_key variable is empty, named, and warned about (see
	// TestAPIKeyFromUnsetVariableIsWarnedAndRecorded); nothing else warns.
	if b.Backend.APIKey != "" || b.Backend.APIKeyUnsetVar != "UNSET_KEY" || len(cfg.Warnings) != 1 {
		t.Errorf("unset api_key: key=%q var=%q warnings:%s", b.Backend.APIKey, b.Backend.APIKeyUnsetVar, dump(cfg.Warnings))
	}
}

// Upstream reads YAML with PyYAML, where plain yes/no/on/off are booleans.
func TestYAML11Booleans(t *testing.T) {
	cfg := parseOK(t, "agents:\n  - id: a\n    backend: {type: grok, model: grok-3, enable_web_search: On, extra_body: {search: 'yes'}}\nui: {logging_enabled: no}\n", nil)
	b := cfg.Agents[0].Backend
	if b.Extra["enable_web_search"] != true || b.Params["extra_body"].(map[string]any)["search"] != "yes" || cfg.UI.LoggingEnabled {
		t.Errorf("extra=%v params=%v logging=%v", b.Extra, b.Params, cfg.UI.LoggingEnabled)
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	cfg := parseOK(t, `base: &base {type: openai, model: gpt-4o, temperature: 0.5}
agents:
  - id: a
    backend: *base
  - id: b
    backend:
      <<: *base
      model: gpt-5
`, nil)
	if got := cfg.Agents[0].Backend; got.Model != "gpt-4o" || got.Params["temperature"] != 0.5 {
		t.Errorf("alias backend = %+v", got)
	}
	if got := cfg.Agents[1].Backend; got.Type != "openai" || got.Model != "gpt-5" || got.Params["temperature"] != 0.5 {
		t.Errorf("merged backend = %+v", got)
	}
	if _, ok := find(cfg.Warnings, "base", Warning); !ok {
		t.Errorf("the anchor holder is an unknown top-level key and should warn:%s", dump(cfg.Warnings))
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "massgen.yaml")
	if err := os.WriteFile(path, []byte(oneAgent), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != path || string(cfg.Raw) != oneAgent {
		t.Errorf("Path=%q Raw=%q", cfg.Path, cfg.Raw)
	}

	missing := filepath.Join(dir, "nope.yaml")
	_, err = Load(missing, nil)
	if err == nil || err.Error() != "config file not found: "+missing || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
	if _, err := Load(dir, nil); err == nil || !strings.Contains(err.Error(), "cannot read config file "+dir) {
		t.Errorf("directory: err = %v", err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("agents:\n  - id: a\n    backend: {type: opena, model: m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad, nil)
	var ds Diagnostics
	if !errors.As(err, &ds) || !strings.HasPrefix(err.Error(), bad+":3:21: agents[0].backend.type: unknown backend type 'opena'") {
		t.Errorf("bad file: err = %v", err)
	}
}
