package openai

import "github.com/massgen/massgen/internal/llm"

// OpenAI's own API speaks Responses; every other OpenAI-style endpoint is
// chatcompat's.
func init() {
	llm.Register(llm.Provider{Type: "openai", New: func(b llm.Backend) llm.Model {
		return New(Options{Provider: b.Type, BaseURL: b.BaseURL, APIKey: b.APIKey, Model: b.Model})
	}})
}
