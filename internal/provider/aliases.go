package provider

import "strings"

// modelAliases are the short names a user types for a provider's current
// model (`--model sonnet`), each a model of the catalogue (models.yaml),
// so that the run is priced; the backend follows from the model's name.
var modelAliases = map[string]string{
	"sonnet":      "claude-sonnet-4-5",
	"claude":      "claude-sonnet-4-5",
	"opus":        "claude-opus-4-1",
	"haiku":       "claude-haiku-4-5",
	"gpt":         "gpt-5",
	"gpt-mini":    "gpt-5-mini",
	"gpt-nano":    "gpt-5-nano",
	"gemini":      "gemini-2.5-pro",
	"gemini-pro":  "gemini-2.5-pro",
	"flash":       "gemini-2.5-flash",
	"gemini-fast": "gemini-2.5-flash",
	"grok":        "grok-4",
	"grok-fast":   "grok-4-fast",
	"glm":         "glm-4.5",
}

// ResolveAlias returns the model a short name stands for ("sonnet" →
// "claude-sonnet-4-5"), case-insensitively, and whether name was one.
func ResolveAlias(name string) (string, bool) {
	m, ok := modelAliases[strings.ToLower(strings.TrimSpace(name))]
	return m, ok
}

// Aliases lists the short names and the models they stand for.
func Aliases() map[string]string {
	out := make(map[string]string, len(modelAliases))
	for k, v := range modelAliases {
		out[k] = v
	}
	return out
}
