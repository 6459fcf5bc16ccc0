package examples

import (
	"slices"
	"testing"
)

// The names a MassGen user types find the example they mean: its path
// (with or without .yaml, under upstream's configs/ prefix too), the short
// name upstream's --list-examples prints, a file name, or part of a path.
func TestFindResolvesTheNamesMassGenUsersType(t *testing.T) {
	for name, want := range map[string]string{
		"basic/multi/three_agents_default":                 "basic/multi/three_agents_default.yaml",
		"basic/multi/three_agents_default.yaml":            "basic/multi/three_agents_default.yaml",
		"configs/basic/multi/three_agents_default.yaml":    "basic/multi/three_agents_default.yaml",
		"massgen/configs/tools/mcp/claude_mcp_example":     "tools/mcp/claude_mcp_example.yaml",
		"basic_multi_three_agents_default":                 "basic/multi/three_agents_default.yaml",
		"three_agents_default":                             "basic/multi/three_agents_default.yaml",
		"sim_three_agents":                                 "sim_three_agents.yaml",
		"gpt5":                                             "providers/openai/gpt5.yaml",     // a file name beats a longer path containing it
		"single_agent":                                     "basic/single/single_agent.yaml", // not sim_single_agent: the file name matches exactly
		"tools/filesystem/gemini_gpt5nano_protected_paths": "tools/filesystem/gemini_gpt5nano_protected_paths.yaml",
	} {
		file, data, ok := Find(name)
		if !ok || file != want || len(data) == 0 {
			t.Errorf("Find(%q) = %q, %v; want %q", name, file, ok, want)
		}
	}
	for _, name := range []string{"providers/gemini/gemini_3_flash", "no_such_thing", ""} {
		if file, _, ok := Find(name); ok {
			t.Errorf("Find(%q) = %q, want nothing", name, file)
		}
	}
}

// Near offers the examples of the folder a name that matches nothing
// points into, or of its nearest parent that has some.
func TestNearOffersTheFolder(t *testing.T) {
	if got := Near("providers/gemini/gemini_3_flash"); !slices.Contains(got, "providers/gemini/gemini_gpt5nano") || slices.Contains(got, "providers/openai/gpt5") {
		t.Errorf("Near(providers/gemini/…) = %q", got)
	}
	if got := Near("tools/planning/five_agents_filesystem_mcp_planning_mode"); !slices.Contains(got, "tools/mcp/claude_mcp_example") {
		t.Errorf("Near(tools/planning/…) = %q, want the tools/ examples", got)
	}
	if got := Near("nothing"); got != nil {
		t.Errorf("Near(nothing) = %q", got)
	}
}

// Every name Names lists is found as itself.
func TestEveryNameIsFound(t *testing.T) {
	for _, n := range Names() {
		if file, _, ok := Find(n); !ok || file != n+".yaml" {
			t.Errorf("Find(%q) = %q, %v", n, file, ok)
		}
	}
}
