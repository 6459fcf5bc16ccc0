package suggest

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
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	long := strings.Repeat("x", 1000)
	if got := Distance(long, long+"y"); got != 1001 {
		t.Errorf("long inputs are not compared character by character; got %d", got)
	}
}
