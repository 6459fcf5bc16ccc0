package llmsim

import "testing"

// Any tool a CLI was served over MCP is scripted by its bare name: the
// simulator calls it by the name the request offers it under, and a name
// offered as is wins over a prefixed one.
func TestAnyMCPToolUnderACLIsPrefix(t *testing.T) {
	r := &request{tools: []string{"mcp__massgen_tools__custom_tool__two_num_tool", "mcp_weather_get_forecast", "Write"}}
	for name, want := range map[string]string{
		"custom_tool__two_num_tool": "mcp__massgen_tools__custom_tool__two_num_tool",
		"get_forecast":              "mcp_weather_get_forecast",
		"Write":                     "Write",
		"forecast_x":                "",
	} {
		if got := r.offered(name); got != want {
			t.Errorf("offered(%q) = %q, want %q", name, got, want)
		}
	}
	if got := (&request{tools: []string{"mcp__s__lookup", "lookup"}}).offered("lookup"); got != "lookup" {
		t.Errorf("offered(lookup) = %q, want the tool offered under its own name", got)
	}
}
