// Package suggest finds the nearest known name to a mistyped one, for
// "did you mean …?" hints in config errors and on the command line.
package suggest

import "strings"

// Closest returns the candidate nearest to word, or "" when none is close
// enough to be a plausible typo. A case-insensitive exact match always wins
// (`OpenAI` → `openai`); otherwise the edit distance must be at most a third
// of the word's length (at least 1, at most 3), so short words only match
// near-misses and long keys tolerate a couple of slips.
func Closest(word string, candidates []string) string {
	if word == "" {
		return ""
	}
	lw := strings.ToLower(word)
	for _, c := range candidates {
		if strings.ToLower(c) == lw {
			return c
		}
	}
	limit := min(max(len([]rune(word))/3, 1), 3)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := Distance(lw, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the optimal-string-alignment edit distance: insertions,
// deletions, substitutions and transpositions of adjacent characters each
// cost one. Transpositions matter because "opeani" is a typical typo.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Keys are short; a length guard keeps hostile input from costing
	// quadratic time in the fuzz test or on a pasted blob.
	if len(ra) > 64 || len(rb) > 64 {
		if a == b {
			return 0
		}
		return max(len(ra), len(rb))
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
