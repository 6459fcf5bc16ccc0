package provider

import (
	"math"
	"testing"

	"github.com/massgen/massgen/internal/llm"
)

func TestLookupModelMatchesExactThenSnapshotsOfTheLongestPrefix(t *testing.T) {
	getenv := func(string) string { return "" }
	tests := []struct{ model, want string }{
		{"gpt-4o", "gpt-4o"},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"openrouter/openai/gpt-4o-mini", "gpt-4o-mini"},
		{"Gemini-2.5-Flash", "gemini-2.5-flash"},
		{"sim-alpha", "sim"},
		{"totally-unknown-model", ""},
		// A typo is not a snapshot: it must not take its prefix's price.
		{"gpt-4o-mnii", ""},
		{"gpt-4o-minix", ""},
		{"claude-sonnet-4-5-latest", "claude-sonnet-4-5"},
		{"gemini-2.5-flash-001", "gemini-2.5-flash"},
		{"o3-mini-2025-01-31", "o3-mini"},
	}
	for _, tt := range tests {
		m, ok, err := LookupModel(tt.model, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if got := map[bool]string{true: m.ID, false: ""}[ok]; got != tt.want {
			t.Errorf("LookupModel(%q) = %q, want %q", tt.model, got, tt.want)
		}
	}
}

func TestCostBillsCachedInputAtTheCachedRate(t *testing.T) {
	m := ModelInfo{Input: 2.50, Output: 10.00, Cached: 1.25}
	got := m.Cost(llm.Usage{InputTokens: 1_000_000, CachedTokens: 400_000, OutputTokens: 100_000})
	want := 0.6*2.50 + 0.4*1.25 + 0.1*10.00
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("cost = %v, want %v", got, want)
	}
	noCacheRate := ModelInfo{Input: 1, Output: 2}
	if got := noCacheRate.Cost(llm.Usage{InputTokens: 1_000_000, CachedTokens: 500_000}); math.Abs(got-1) > 1e-9 {
		t.Errorf("cached tokens without a cached rate cost %v, want the input rate (1)", got)
	}
}

func TestCacheWritesAreBilledAtTheirOwnRate(t *testing.T) {
	m := ModelInfo{Input: 3, Output: 15, Cached: 0.30, CacheWrite: 3.75}
	got := m.Cost(llm.Usage{InputTokens: 1_000_000, CachedTokens: 200_000, CacheWriteTokens: 300_000})
	want := 0.5*3 + 0.2*0.30 + 0.3*3.75
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("cost = %v, want %v", got, want)
	}
}
