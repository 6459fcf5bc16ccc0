package toolless

import (
	"regexp"
	"sync"

	"github.com/massgen/massgen/internal/coord"
)

// Decomposition mode (coordination_mode: decomposition) offers stop
// instead of vote: {"action": "stop", "summary", "status"}, or the lines
// STOP: <summary> and STATUS: complete|blocked.

const (
	stopJSONLine = `- when your subtask is done: {"action": "stop", "summary": ..., "status": ...} with what you accomplished and how it connects to the others' work in "summary", and "complete" or "blocked" in "status"` + "\n"
	stopTextLine = "- when your subtask is done: a line `STOP: <what you accomplished and how it connects>` and a line `STATUS: complete` (or `STATUS: blocked`)\n"
)

// stopSchema is the stop action's JSON schema.
func stopSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action":  map[string]any{"type": "string", "enum": []string{coord.ToolStop}},
			"summary": map[string]any{"type": "string", "maxLength": maxReason},
			"status":  map[string]any{"type": "string", "enum": []string{coord.StopComplete, coord.StopBlocked}},
		},
		"required":             []string{"action", "summary", "status"},
		"additionalProperties": false,
	}
}

// stopMarkerRe is markerRe with the STOP: and STATUS: lines.
var stopMarkerRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?im)^[\s*#>_` + "`" + `]*(ANSWER|VOTE|REASON|STOP|STATUS)[\s*_]*:[\s*_]*`)
})
