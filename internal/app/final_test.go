package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/orchestrator"
)

// Each backend type is asked for structured output in its own terms; the
// team given is left as it is (it may be shared by concurrent runs).
func TestFinalFormatParamsPerBackend(t *testing.T) {
	schema := map[string]any{"type": "object"}
	f := &FinalFormat{Name: "city", Schema: schema, Strict: true}
	team := []orchestrator.Agent{
		{ID: "o", Backend: "openai", Params: map[string]any{"text": map[string]any{"verbosity": "low"}}},
		{ID: "g", Backend: "gemini"},
		{ID: "q", Backend: "groq"},
		{ID: "c", Backend: "claude"},
		{ID: "s", Backend: "sim"},
	}
	got := withFinalFormat(team, f)
	want := []map[string]any{
		{"text": map[string]any{"verbosity": "low", "format": map[string]any{"type": "json_schema", "name": "city", "schema": schema, "strict": true}}},
		{"response_mime_type": "application/json", "response_json_schema": schema},
		{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "city", "schema": schema, "strict": true}}},
		nil, // the instruction alone
		nil,
	}
	for i, a := range got {
		if d := cmp.Diff(want[i], a.FinalParams); d != "" {
			t.Errorf("%s (-want +got):\n%s", a.Backend, d)
		}
		if team[i].FinalParams != nil {
			t.Errorf("%s: the shared team was changed", a.Backend)
		}
	}
	if _, ok := team[0].Params["text"].(map[string]any)["format"]; ok {
		t.Error("the agent's own text parameter was changed")
	}
	obj := (&FinalFormat{}).params("openai", nil)
	if d := cmp.Diff(map[string]any{"text": map[string]any{"format": map[string]any{"type": "json_object"}}}, obj); d != "" {
		t.Errorf("json_object for openai (-want +got):\n%s", d)
	}
	if withFinalFormat(team, nil)[0].FinalParams != nil {
		t.Error("no format, yet final params")
	}
}
