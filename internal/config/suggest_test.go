package config

import "testing"

func TestClosest(t *testing.T) {
	types := []string{"openai", "claude", "gemini", "grok", "sim", "zai", "claude_code"}
	tests := []struct{ word, want string }{
		{"OpenAI", "openai"}, // case only
		{"opena", "openai"},  // one typo
		{"claude-code", "claude_code"},
		{"groq", "grok"}, // short words tolerate one edit
		{"gpt", ""},      // not a typo of anything
		{"watsonx", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := closest(tc.word, types); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	if got := oneOf("strct", levelValues); got != "did you mean 'strict'? (valid values: lenient, balanced, strict)" {
		t.Errorf("oneOf = %q", got)
	}
	if got := oneOf("max", levelValues); got != "valid values: lenient, balanced, strict" {
		t.Errorf("oneOf = %q", got)
	}
}
