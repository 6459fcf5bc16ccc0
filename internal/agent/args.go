package agent

import "encoding/json"

// decodeArgs reads a tool call's string arguments; malformed JSON yields an
// empty map, as MassGen does.
func decodeArgs(raw string) map[string]string {
	var m map[string]any
	_ = json.Unmarshal([]byte(raw), &m)
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
