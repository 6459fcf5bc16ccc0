package config

import (
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/suggest"
)

func closest(word string, candidates []string) string { return suggest.Closest(word, candidates) }

// didYouMean formats closest's answer as a suggestion, or "".
func didYouMean(word string, candidates []string) string {
	if c := closest(word, candidates); c != "" && c != word {
		return fmt.Sprintf("did you mean '%s'?", c)
	}
	return ""
}

// oneOf suggests the nearest valid value when there is one, and always lists
// the valid values, since enum mistakes are rarely one typo away.
func oneOf(word string, valid []string) string {
	list := "valid values: " + strings.Join(valid, ", ")
	if s := didYouMean(word, valid); s != "" {
		return s + " (" + list + ")"
	}
	return list
}
