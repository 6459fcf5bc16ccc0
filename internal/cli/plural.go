package cli

import "fmt"

// count is "1 agent", "2 agents", "0 warnings": a number and its noun,
// plural unless the number is one.
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
