package llmsim

import "testing"

// Copilot CLI names an MCP server's tools "<server>-<tool>": the workflow
// tools are recognised under that prefix too, and called by it.
func TestWorkflowToolsUnderADashPrefix(t *testing.T) {
	f := start(t, nil)
	answer := fnTool("massgen-new_answer", map[string]any{"type": "object",
		"properties": map[string]any{"content": map[string]any{"type": "string"}}, "required": []string{"content"}})
	vote := fnTool("massgen-vote", map[string]any{"type": "object", "properties": map[string]any{
		"agent_id": map[string]any{"type": "string", "enum": []string{"agent2", "agent1"}},
		"reason":   map[string]any{"type": "string"},
	}})
	bash := fnTool("bash", nil)
	r := runStream(t, testCtx(t), f, params("cop", "task", bash, answer))
	if calls := r.message().ToolCalls; r.err != nil || len(calls) != 1 || calls[0].Function.Name != "massgen-new_answer" {
		t.Fatalf("answer: calls %+v, %v", calls, r.err)
	}
	r = runStream(t, testCtx(t), f, params("cop", "task", bash, answer, vote))
	if calls := r.message().ToolCalls; r.err != nil || len(calls) != 1 || calls[0].Function.Name != "massgen-vote" ||
		calls[0].Function.Arguments != `{"agent_id":"agent2","reason":"simulated vote: agent2 is complete"}` {
		t.Fatalf("vote: calls %+v, %v", calls, r.err)
	}
	if rec := lastRecord(t, f); rec.Step != "vote" {
		t.Errorf("record %+v", rec)
	}
	// Built-in tools alone: a presentation's text.
	r = runStream(t, testCtx(t), f, params("cop", "task", bash))
	if calls := r.message().ToolCalls; len(calls) != 0 {
		t.Errorf("presentation: calls %+v", calls)
	}
}
