package coord

import "strings"

// normalise trims an answer for duplicate detection.
func normalise(s string) string { return strings.TrimSpace(s) }

// noveltyLimit returns the word-set Jaccard similarity above which a new
// answer counts as a near-duplicate, and whether the check applies at all.
func noveltyLimit(n Novelty) (float64, bool) {
	switch n {
	case NoveltyBalanced:
		return 0.70, true
	case NoveltyStrict:
		return 0.50, true
	}
	return 0, false
}

// jaccard is the word-set similarity of two texts. Words are lowercased and
// stripped of surrounding punctuation, so "Paris." and "paris" match: upstream
// splits on whitespace only, which lets punctuation make a copy look novel.
func jaccard(a, b string) float64 {
	wa, wb := words(a), words(b)
	if len(wa) == 0 && len(wb) == 0 {
		return 1
	}
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(wa)+len(wb)-inter)
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Fields(strings.ToLower(s)) {
		f = strings.TrimFunc(f, func(r rune) bool {
			return strings.ContainsRune(".,;:!?\"'()[]{}*_`", r)
		})
		if f != "" {
			out[f] = true
		}
	}
	return out
}
