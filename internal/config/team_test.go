package config

import (
	"fmt"
	"strings"
	"testing"
)

func agentsList(n int) string {
	var b strings.Builder
	b.WriteString("# a big team\nagents:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: a%d, backend: {type: sim}}\n", i)
	}
	return b.String()
}

// Issue 18: 5000 agents ignored the deadline and grew until killed (500
// took 3.2 GB). A team has at most MaxAgents; more is an error at the
// agents key, saying how many there are and what to do.
func TestATeamPastMaxAgentsIsAConfigError(t *testing.T) {
	if ds := diagnose(t, agentsList(MaxAgents), nil); ds.HasErrors() {
		t.Fatalf("%d agents refused:%s", MaxAgents, dump(ds))
	}
	ds := diagnose(t, agentsList(5000), nil)
	d, ok := find(ds, "agents", Error)
	if !ok {
		t.Fatalf("5000 agents accepted:%s", dump(ds))
	}
	if d.Line != 2 || !strings.Contains(d.Message, "the config defines 5000 agents; a team has at most 100") || d.Suggestion == "" {
		t.Errorf("got %s", d)
	}
	// Built in code, the same.
	c := New()
	for i := range MaxAgents + 1 {
		c.Agents = append(c.Agents, Agent{ID: fmt.Sprint("a", i), Backend: Backend{Type: "sim"}})
	}
	if _, ok := find(c.Validate(), "agents", Error); !ok {
		t.Errorf("a team of %d built in code was accepted", MaxAgents+1)
	}
}
