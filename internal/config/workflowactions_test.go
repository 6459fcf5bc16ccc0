package config

import (
	"strings"
	"testing"
)

func TestWorkflowActionsIsReadAndChecked(t *testing.T) {
	cfg := parseOK(t, `agents:
  - id: a
    backend: {type: lmstudio, model: smollm2, workflow_actions: json_schema}
  - id: b
    backend: {type: vllm, model: qwen}
`, nil)
	if got := cfg.Agents[0].Backend.WorkflowActions; got != "json_schema" {
		t.Errorf("WorkflowActions = %q, want json_schema", got)
	}
	if got := cfg.Agents[1].Backend.WorkflowActions; got != "" {
		t.Errorf("an agent without the key: WorkflowActions = %q, want the default (empty)", got)
	}
	if _, sent := cfg.Agents[0].Backend.Params["workflow_actions"]; sent {
		t.Error("workflow_actions would be sent to the provider")
	}
	ds := diagnose(t, `agents:
  - id: a
    backend: {type: lmstudio, model: smollm2, workflow_actions: grammar}
`, nil)
	d, ok := find(ds, "agents[0].backend.workflow_actions", Error)
	if !ok || !strings.Contains(d.Message, "native, auto, json_schema, text") {
		t.Fatalf("an unknown mode: want an error naming the modes, got%s", dump(ds))
	}
}
