package coord

import "testing"

func TestAgentRefNamesAnAgentOnce(t *testing.T) {
	for id, want := range map[string]string{"agent": "agent", "agent1": "agent1", "agent_a": "agent_a", "critic": "agent critic", "Agentur": "Agentur"} {
		if got := AgentRef(id); got != want {
			t.Errorf("AgentRef(%q) = %q, want %q", id, got, want)
		}
	}
}
