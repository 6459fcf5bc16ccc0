package llmsim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// checkResults matches a step's expected tool results against the results a
// request carries, and returns what is wrong ("" when all are found).
// Expectations are matched in order, each to the first unused result of its
// function that contains its text.
func checkResults(want []Expect, got []toolResult) string {
	used := make([]bool, len(got))
	for _, e := range want {
		found := false
		for i, r := range got {
			if used[i] || e.Name != "" && r.name != e.Name && kitName(r.name) != e.Name && !mcpTool(r.name, e.Name) || !resultContains(r.content, e.Contains) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			return fmt.Sprintf("expected a tool result%s containing %q; %s", forName(e.Name), e.Contains, describeResults(got))
		}
	}
	return ""
}

func forName(name string) string {
	if name == "" {
		return ""
	}
	return " of " + name
}

func describeResults(got []toolResult) string {
	if len(got) == 0 {
		return "the request carries no tool results after the last assistant message"
	}
	parts := make([]string, len(got))
	for i, r := range got {
		parts[i] = fmt.Sprintf("%s: %q", cmpOr(r.name, "(unknown call)"), r.content)
	}
	return "the results were " + strings.Join(parts, ", ")
}

// resultContains looks for s in a result's text. Gemini carries a result as
// a JSON object ({"content": "..."} from most clients), so the string values
// of an object are searched too, unescaped.
func resultContains(content, s string) bool {
	if strings.Contains(content, s) {
		return true
	}
	var obj map[string]any
	if json.Unmarshal([]byte(content), &obj) != nil {
		return false
	}
	for _, v := range obj {
		if str, ok := v.(string); ok && strings.Contains(str, s) {
			return true
		}
	}
	return false
}
