package config

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"openai", "openai", 0},
		{"opena", "openai", 1},   // deletion
		{"opeani", "openai", 1},  // transposition
		{"claud", "claude", 1},   // deletion at the end
		{"gemeni", "gemini", 1},  // substitution
		{"kitten", "sitting", 3}, // the classic
		{"", "abc", 3},
	}
	for _, tc := range tests {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	long := strings.Repeat("x", 1000)
	if got := distance(long, long+"y"); got != 1001 {
		t.Errorf("long inputs are not compared character by character; got %d", got)
	}
}

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
