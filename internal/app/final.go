package app

import (
	"maps"
	"slices"

	"github.com/massgen/massgen/internal/orchestrator"
)

// FinalFormat is the shape of final answer an API client asked for
// (massgen serve's response_format / text.format): the final presentation
// is told so, and asked for structured output in its provider's terms
// where the provider has it. Checking the answer is the caller's.
type FinalFormat struct {
	// Instruction is added to the final presentation's prompt.
	Instruction string
	// Name, Schema and Strict are the JSON Schema asked for; a nil
	// Schema asks for any JSON object.
	Name   string
	Schema map[string]any
	Strict bool
}

// chatCompatible are the backend types whose adapter speaks Chat
// Completions (internal/llm/chatcompat), where structured output is
// response_format. The simulator is left out: its answers are not JSON.
var chatCompatible = []string{"chatcompletion", "azure_openai", "grok", "zai", "cerebras", "together", "fireworks", "groq",
	"openrouter", "nebius", "moonshot", "kimi", "qwen", "poe", "ollama", "lmstudio", "vllm", "sglang"}

// params are the request parameters that ask a backend of type typ for
// this format (nil: it has no structured output; the instruction alone
// asks). base is the agent's own parameters, which the result merges
// with where they share a key (text: the Responses API's verbosity).
func (f *FinalFormat) params(typ string, base map[string]any) map[string]any {
	name := f.Name
	if name == "" {
		name = "answer"
	}
	switch {
	case typ == "openai":
		format := map[string]any{"type": "json_object"}
		if f.Schema != nil {
			format = map[string]any{"type": "json_schema", "name": name, "schema": f.Schema, "strict": f.Strict}
		}
		text := map[string]any{}
		if t, ok := base["text"].(map[string]any); ok {
			text = maps.Clone(t)
		}
		text["format"] = format
		return map[string]any{"text": text}
	case typ == "gemini":
		p := map[string]any{"response_mime_type": "application/json"}
		if f.Schema != nil {
			p["response_json_schema"] = f.Schema
		}
		return p
	case slices.Contains(chatCompatible, typ):
		if f.Schema == nil {
			return map[string]any{"response_format": map[string]any{"type": "json_object"}}
		}
		return map[string]any{"response_format": map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": name, "schema": f.Schema, "strict": f.Strict}}}
	}
	return nil // claude, sim: the instruction alone
}

// withFinalFormat returns agents whose final presentation asks for f;
// agents is left as it is (a team may be shared by concurrent runs).
func withFinalFormat(agents []orchestrator.Agent, f *FinalFormat) []orchestrator.Agent {
	if f == nil {
		return agents
	}
	out := slices.Clone(agents)
	for i := range out {
		out[i].FinalParams = f.params(out[i].Backend, out[i].Params)
	}
	return out
}
