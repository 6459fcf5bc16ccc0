package event

import (
	"strings"
	"testing"
)

// A stop in decomposition mode (a vote for one's own work whose reason
// starts "stop (") reads as a stop, not a vote.
func TestDescribeSaysStopped(t *testing.T) {
	e := VoteAccepted{Agent: "a", Target: "a", TargetLabel: "agent1", Reason: "stop (blocked): needs a release token"}
	if got := Describe(e); got != "a stopped (blocked): needs a release token" {
		t.Errorf("Describe = %q", got)
	}
	e = VoteAccepted{Agent: "a", Target: "b", Reason: "stop (complete) is what b said"}
	if got := Describe(e); !strings.HasPrefix(got, "a voted for b") {
		t.Errorf("a vote for another agent reads %q", got)
	}
}
