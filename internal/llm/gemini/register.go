package gemini

import "github.com/massgen/massgen/internal/llm"

func init() {
	llm.Register(llm.Provider{Type: "gemini", New: func(b llm.Backend) llm.Model {
		return New(Options{Provider: b.Type, BaseURL: b.BaseURL, APIKey: b.APIKey, Model: b.Model})
	}})
}
