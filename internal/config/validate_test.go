package config

import (
	"fmt"
	"strings"
	"testing"
)

// Each validation rule: the source, and the diagnostic it must produce,
// with its key path, file:line:col and suggestion.
func TestValidationRules(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		key       string
		sev       Severity
		line, col int
		msg       string // substring of Message
		sugg      string // substring of Suggestion ("" = not checked)
	}{
		{
			name: "no agent and no agents",
			src:  "ui: {display_type: simple}\n",
			key:  "", line: 1, col: 1, msg: "defines no agents", sugg: "add an 'agents:' list",
		},
		{
			name: "both agent and agents",
			src:  oneAgent + "agent:\n  id: b\n  backend: {type: openai, model: gpt-4o}\n",
			key:  "", line: 4, col: 1, msg: "both 'agents' and 'agent'", sugg: "use 'agents:'",
		},
		{
			name: "agents is not a list",
			src:  "agents:\n  id: a\n",
			key:  "agents", line: 2, col: 3, msg: "must be a list of agents (each entry '- id: ...'), got a map",
		},
		{
			name: "agents is empty",
			src:  "agents: []\n",
			key:  "agents", line: 1, col: 1, msg: "'agents' is empty",
		},
		{
			name: "agent is not a map",
			src:  "agent: gpt-4o\n",
			key:  "agent", line: 1, col: 8, msg: `must be a map with 'id' and 'backend', got string "gpt-4o"`,
		},
		{
			name: "agents entry is not a map",
			src:  oneAgent + "  - gpt-4o\n",
			key:  "agents[1]", line: 4, col: 5, msg: "must be a map",
		},
		{
			name: "missing id in agents list",
			src:  oneAgent + "  - backend: {type: openai, model: gpt-4o}\n",
			key:  "agents[1].id", line: 4, col: 5, msg: "agent has no 'id'", sugg: `add 'id: "agent2"'`,
		},
		{
			name: "non-string id",
			src:  "agents:\n  - id: [x]\n    backend: {type: openai, model: gpt-4o}\n",
			key:  "agents[0].id", line: 2, col: 9, msg: "must be a string, got a list",
		},
		{
			name: "duplicate id",
			src:  oneAgent + "  - id: a\n    backend: {type: claude, model: claude-sonnet-4}\n",
			key:  "agents[1].id", line: 4, col: 9, msg: "duplicate agent id 'a' (first at line 2)", sugg: "unique",
		},
		{
			name: "missing backend",
			src:  "agents:\n  - id: a\n    system_message: hi\n",
			key:  "agents[0].backend", line: 2, col: 5, msg: "agent has no backend", sugg: "add 'backend:'",
		},
		{
			name: "type missing and not inferable from model",
			src:  "agents:\n  - id: a\n    backend:\n      model: my-local-model\n",
			key:  "agents[0].backend.type", line: 3, col: 5,
			msg: "no 'type' and it cannot be inferred from model 'my-local-model'", sugg: "one of: sim, chatcompletion, openai",
		},
		{
			name: "unknown type is a typo",
			src:  "agents:\n  - id: a\n    backend:\n      type: opena\n      model: gpt-4o\n",
			key:  "agents[0].backend.type", line: 4, col: 13, msg: "unknown backend type 'opena'", sugg: "did you mean 'openai'?",
		},
		{
			name: "unknown type in the wrong case",
			src:  "agents:\n  - id: a\n    backend: {type: OpenAI, model: gpt-4o}\n",
			key:  "agents[0].backend.type", line: 3, col: 21, msg: "unknown backend type 'OpenAI'", sugg: "did you mean 'openai'? (backend types are lowercase)",
		},
		{
			name: "unknown type far from any",
			src:  "agents:\n  - id: a\n    backend: {type: watsonx, model: granite}\n",
			key:  "agents[0].backend.type", line: 3, col: 21, msg: "unknown backend type 'watsonx'", sugg: "valid types: sim, chatcompletion",
		},
		{
			name: "missing model",
			src:  "agents:\n  - id: a\n    backend:\n      type: claude\n",
			key:  "agents[0].backend.model", line: 3, col: 5, msg: "backend has no 'model'", sugg: "claude model",
		},
		{
			name: "endpoint without base_url",
			src:  "agents:\n  - id: a\n    backend:\n      type: poe\n      model: Claude-Sonnet-4\n",
			key:  "agents[0].backend.base_url", line: 3, col: 5, msg: "backend type 'poe' needs a 'base_url'",
		},
		{
			name: "alias expansion is bounded",
			src:  aliasBomb(),
			// Refused before parsing (inputlimit), at the alias that crosses the limit.
			key: "", line: 5, col: 45, msg: "aliases expand to more than 100000 nodes",
		},
		{
			name: "nesting is bounded",
			src:  "agents: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n",
			// Refused before parsing (inputlimit), at the 64th '['.
			key: "", line: 1, col: 72, msg: "config nests deeper than 64 levels",
		},
		{
			name: "non-string model",
			src:  "agents:\n  - id: a\n    backend: {type: openai, model: 4}\n",
			key:  "agents[0].backend.model", line: 3, col: 36, msg: "must be a string, got integer 4",
		},
		{
			name: "system_prompt in backend",
			src:  "agents:\n  - id: a\n    backend:\n      type: claude_code\n      model: claude-sonnet-4\n      system_prompt: be brief\n",
			key:  "agents[0].backend.system_prompt", line: 6, col: 7, msg: "'system_prompt' is not allowed in a backend", sugg: "'system_message'",
		},
		{
			name: "append_system_prompt in backend",
			src:  "agent:\n  backend:\n    type: claude_code\n    model: claude-sonnet-4\n    append_system_prompt: more\n",
			key:  "agent.backend.append_system_prompt", line: 5, col: 5, msg: "not allowed in a backend", sugg: "system_message",
		},
		{
			name: "enable_web_search is a string",
			src:  "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      enable_web_search: \"true\"\n",
			key:  "agents[0].backend.enable_web_search", line: 6, col: 26,
			msg: `must be a boolean (true or false), got string "true"`, sugg: "remove the quotes: true",
		},
		{
			name: "enable_image_generation is a number",
			src:  "agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o, enable_image_generation: 1}\n",
			key:  "agents[0].backend.enable_image_generation", line: 3, col: 69, msg: "must be a boolean (true or false), got integer 1",
		},
		{
			name: "allowed_tools is not a list",
			src:  "agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o, allowed_tools: read_file}\n",
			key:  "agents[0].backend.allowed_tools", line: 3, col: 59, msg: "must be a list of strings",
		},
		{
			name: "bad permission_mode",
			src:  "agents:\n  - id: a\n    backend: {type: claude_code, model: c, permission_mode: acceptedits}\n",
			key:  "agents[0].backend.permission_mode", line: 3, col: 61, msg: "invalid permission_mode 'acceptedits'", sugg: "did you mean 'acceptEdits'?",
		},
		{
			name: "context_paths not a list",
			src:  oneAgent + "orchestrator:\n  context_paths: /src\n",
			key:  "orchestrator.context_paths", line: 5, col: 18, msg: "must be a list of {path, permission} entries",
		},
		{
			name: "context path entry without path",
			src:  oneAgent + "orchestrator:\n  context_paths:\n    - permission: read\n",
			key:  "orchestrator.context_paths[0].path", line: 6, col: 7, msg: "context path entry has no 'path'",
		},
		{
			name: "context path permission invalid",
			src:  oneAgent + "orchestrator:\n  context_paths:\n    - path: /src\n      permission: rw\n",
			key:  "orchestrator.context_paths[0].permission", line: 7, col: 19, msg: "invalid permission 'rw'", sugg: "valid values: read, write",
		},
		{
			name: "backend context path permission invalid",
			src:  "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      context_paths: [{path: /x, permission: execute}]\n",
			key:  "agents[0].backend.context_paths[0].permission", line: 6, col: 46, msg: "invalid permission 'execute'",
		},
		{
			name: "coordination not a map",
			src:  oneAgent + "orchestrator:\n  coordination: true\n",
			key:  "orchestrator.coordination", line: 5, col: 17, msg: "must be a map, got boolean true",
		},
		{
			name: "max_orchestration_restarts negative",
			src:  oneAgent + "orchestrator:\n  coordination:\n    max_orchestration_restarts: -1\n",
			key:  "orchestrator.coordination.max_orchestration_restarts", line: 6, col: 33, msg: "must be 0 or more, got -1",
		},
		{
			name: "max_orchestration_restarts not an integer",
			src:  oneAgent + "orchestrator:\n  coordination:\n    max_orchestration_restarts: 1.5\n",
			key:  "orchestrator.coordination.max_orchestration_restarts", line: 6, col: 33, msg: "must be a whole number (0 or more), got number 1.5",
		},
		{
			name: "bad voting_sensitivity",
			src:  oneAgent + "orchestrator:\n  voting_sensitivity: strcit\n",
			key:  "orchestrator.voting_sensitivity", line: 5, col: 23, msg: "invalid voting_sensitivity 'strcit'",
			sugg: "did you mean 'strict'? (valid values: lenient, balanced, strict, roi,",
		},
		{
			name: "bad answer_novelty_requirement",
			src:  oneAgent + "orchestrator:\n  answer_novelty_requirement: high\n",
			key:  "orchestrator.answer_novelty_requirement", line: 5, col: 31, msg: "invalid answer_novelty_requirement 'high'",
			sugg: "valid values: lenient, balanced, strict",
		},
		{
			name: "orchestrator timeout is a string",
			src:  oneAgent + "orchestrator:\n  timeout:\n    orchestrator_timeout_seconds: \"1800\"\n",
			key:  "orchestrator.timeout.orchestrator_timeout_seconds", line: 6, col: 35,
			msg: `must be a positive number of seconds, got string "1800"`, sugg: "remove the quotes: 1800",
		},
		{
			name: "orchestrator timeout not a map",
			src:  oneAgent + "orchestrator:\n  timeout: 60\n",
			key:  "orchestrator.timeout", line: 5, col: 12, msg: "must be a map",
		},
		{
			name: "timeout_settings timeout is zero",
			src:  oneAgent + "timeout_settings:\n  orchestrator_timeout_seconds: 0\n",
			key:  "timeout_settings.orchestrator_timeout_seconds", line: 5, col: 33, msg: "must be a positive number of seconds, got 0",
		},
		{
			name: "agent turn timeout negative",
			src:  oneAgent + "orchestrator:\n  agent_turn_timeout_seconds: -5\n",
			key:  "orchestrator.agent_turn_timeout_seconds", line: 5, col: 31, msg: "must be a positive number of seconds, got -5",
		},
		{
			name: "bad restart_policy",
			src:  oneAgent + "orchestrator:\n  restart_policy: injct\n",
			key:  "orchestrator.restart_policy", line: 5, col: 19, msg: "invalid restart_policy 'injct'", sugg: "did you mean 'inject'?",
		},
		{
			name: "max_new_answers_per_agent zero",
			src:  oneAgent + "orchestrator:\n  max_new_answers_per_agent: 0\n",
			key:  "orchestrator.max_new_answers_per_agent", line: 5, col: 30, msg: "must be a positive integer, or null for no limit, got 0",
		},
		{
			name: "max_new_answers_per_agent quoted",
			src:  oneAgent + "orchestrator:\n  max_new_answers_per_agent: \"3\"\n",
			key:  "orchestrator.max_new_answers_per_agent", line: 5, col: 30, msg: `got string "3"`, sugg: "remove the quotes: 3",
		},
		{
			name: "v1 config",
			src:  "models: [gpt-4o, claude]\nnum_agents: 2\nmax_rounds: 3\n",
			key:  "", line: 1, col: 1, msg: "MassGen v1 config (found models, num_agents, max_rounds)", sugg: "'agents:' list",
		},
		{
			name: "logging_enabled not a boolean",
			src:  oneAgent + "ui:\n  logging_enabled: \"yes\"\n",
			key:  "ui.logging_enabled", line: 5, col: 20, msg: `must be a boolean (true or false), got string "yes"`,
		},
		{
			name: "bad display_type",
			src:  oneAgent + "ui:\n  display_type: rich_termnal\n",
			key:  "ui.display_type", line: 5, col: 17, msg: "invalid display type 'rich_termnal'", sugg: "did you mean 'rich_terminal'?",
		},
		{
			name: "sim keys on another backend",
			src:  "agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o, scenario: s.yaml}\n",
			key:  "agents[0].backend.scenario", sev: Warning, line: 3, col: 44, msg: "only used by type: sim",
		},
		{
			name: "unknown top-level key",
			src:  oneAgent + "orchestratr:\n  voting_sensitivity: strict\n",
			key:  "orchestratr", sev: Warning, line: 4, col: 1, msg: "unknown key 'orchestratr' is ignored", sugg: "did you mean 'orchestrator'?",
		},
		{
			name: "unknown top-level key with a hint",
			src:  oneAgent + "timeouts:\n  orchestrator_timeout_seconds: 60\n",
			key:  "timeouts", sev: Warning, line: 4, col: 1, msg: "unknown key 'timeouts'", sugg: "did you mean 'timeout_settings'?",
		},
		{
			name: "unknown agent key",
			src:  "agents:\n  - id: a\n    system_mesage: hi\n    backend: {type: openai, model: gpt-4o}\n",
			key:  "agents[0].system_mesage", sev: Warning, line: 3, col: 5, msg: "unknown key", sugg: "did you mean 'system_message'?",
		},
		{
			name: "unknown orchestrator key",
			src:  oneAgent + "orchestrator:\n  voting_sensitivty: strict\n",
			key:  "orchestrator.voting_sensitivty", sev: Warning, line: 5, col: 3, msg: "unknown key", sugg: "did you mean 'voting_sensitivity'?",
		},
		{
			name: "unknown ui key",
			src:  oneAgent + "ui:\n  loging_enabled: false\n",
			key:  "ui.loging_enabled", sev: Warning, line: 5, col: 3, msg: "unknown key", sugg: "did you mean 'logging_enabled'?",
		},
		{
			name: "ui type is read as display_type",
			src:  oneAgent + "ui:\n  type: simple\n",
			key:  "ui.type", sev: Warning, line: 5, col: 3, msg: "reading it as display_type", sugg: "rename it to 'display_type'",
		},
		{
			name: "duplicate map key",
			src:  oneAgent + "ui:\n  display_type: simple\n  display_type: silent\n",
			key:  "ui.display_type", sev: Warning, line: 6, col: 3, msg: "duplicate key 'display_type' (first at line 5)",
		},
		{
			name: "both allowed_tools and exclude_tools",
			src:  "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      allowed_tools: [a]\n      exclude_tools: [b]\n",
			key:  "agents[0].backend", sev: Warning, line: 7, col: 7, msg: "both 'allowed_tools' and 'exclude_tools'",
		},
		{
			name: "unset variable outside api_key",
			src:  "agents:\n  - id: a\n    backend: {type: chatcompletion, model: m, base_url: \"${LLM_URL}\"}\n",
			key:  "agents[0].backend.base_url", sev: Warning, line: 3, col: 57, msg: "environment variable LLM_URL is not set",
		},
		{
			name: "malformed YAML",
			src:  "agents:\n  - id: a\n    backend: {type: openai, model: gpt-4o\n",
			key:  "", line: 3, col: 14, msg: "invalid YAML:",
		},
		{
			name: "empty file",
			src:  "\n\n",
			key:  "", line: 0, col: 0, msg: "config file is empty",
		},
		{
			name: "several documents",
			src:  oneAgent + "---\n" + oneAgent,
			key:  "", line: 5, col: 1, msg: "several YAML documents",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := diagnose(t, tc.src, nil)
			d, ok := find(ds, tc.key, tc.sev)
			if !ok {
				t.Fatalf("no %s with key %q; got:%s", tc.sev, tc.key, dump(ds))
			}
			if d.Line != tc.line || d.Col != tc.col {
				t.Errorf("position = %d:%d, want %d:%d (%s)", d.Line, d.Col, tc.line, tc.col, d)
			}
			if d.File != "test.yaml" {
				t.Errorf("File = %q, want test.yaml", d.File)
			}
			if !strings.Contains(d.Message, tc.msg) {
				t.Errorf("Message = %q, want it to contain %q", d.Message, tc.msg)
			}
			if !strings.Contains(d.Suggestion, tc.sugg) {
				t.Errorf("Suggestion = %q, want it to contain %q", d.Suggestion, tc.sugg)
			}
			if s := d.String(); strings.Contains(s, "\n") {
				t.Errorf("String() spans lines: %q", s)
			}
		})
	}
}

// aliasBomb is a "billion laughs" document: ten aliases per level, so nine
// levels would expand to 10^9 nodes if nothing bounded them.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, refs)
	}
	return b.String()
}
