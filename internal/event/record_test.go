package event

import (
	"github.com/massgen/massgen/internal/coord"

	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// samples has one fully filled event of every type.
func samples() []Event {
	h := Header{Seq: 7, Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Attempt: 2, Epoch: 3}
	refs := []AnswerRef{{Label: "agent1", Agent: "c", Answer: "agent3.1"}, {Label: "agent2", Agent: "a", Answer: "agent1.1"}}
	u := Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.25}
	return []Event{
		RunStarted{h, "q?", []AgentInfo{{ID: "a", Backend: "sim", Model: "m", Simulated: true}, {ID: "b"}}},
		TurnStarted{h, "a", "prompt", refs, "retry after 1s"},
		TextDelta{h, "a", "tok", "new_answer"},
		ReasoningDelta{h, "a", "think"},
		ToolCalled{h, "a", "search", `{"q":1}`, "found", true, 1500 * time.Millisecond},
		ToolProgress{h, "a", "mcp__s__crawl", 2, 5, "page 2"},
		AnswerAccepted{h, "a", "answer", "agent1.1", "agent2", refs, ""},
		VoteAccepted{h, "b", "c", "agent1", "agent3.1", "best"},
		ActionRejected{h, "a", "no tool call"},
		TurnRestarted{h, "b", "a", "new answer from a"},
		TurnFailed{h, "a", "503", &coord.Failure{Kind: coord.FailProvider, Agent: "a", Provider: "openai", Model: "gpt-4o", Status: 503, Retryable: true, Message: "503"}},
		TurnEnded{h, "a", u, 2},
		ModelCalled{h, "a", "gpt-4o", u, 1500 * time.Millisecond, &coord.Failure{Kind: coord.FailRateLimit, Agent: "a", Status: 429, Message: "slow down"}},
		AgentFailed{h, "a", "503", "3 consecutive failed turns", &coord.Failure{Kind: coord.FailAuth, Agent: "a", Status: 401, Message: "401"}},
		Timeout{h, "a", "deadline", "turn timeout", &coord.Failure{Kind: coord.FailTimeout, Agent: "a", Retryable: true, Message: "deadline"}},
		BudgetExceeded{h, "max_cost_usd"},
		WinnerSelected{h, "c", map[string]int{"c": 2}, "plurality", "agent3.1", refs},
		FinalStarted{h, "c", "present", "presentation"},
		FinalDelta{h, "c", "fin"},
		FinalAnswer{h, "c", "final", "presentation", u},
		PostEvaluation{h, "c", "restart", "wrong", u},
		RunRestarted{h, "c", "wrong", "fix it"},
		RunFinished{h, "completed", "c", "boom", "the presentation failed, so the stored answer is final", true,
			[]coord.Failure{{Kind: coord.FailQuota, Agent: "a", Provider: "claude", Status: 429, Message: "quota"}}},
	}
}

func TestSamplesCoverEveryType(t *testing.T) {
	seen := map[Type]bool{}
	for _, e := range samples() {
		seen[e.Type()] = true
	}
	for _, typ := range Types {
		if !seen[typ] {
			t.Errorf("no sample of %s", typ)
		}
	}
}

func TestRecordRoundTripsEveryTypeThroughJSON(t *testing.T) {
	for _, e := range samples() {
		b, err := json.Marshal(ToRecord(e))
		if err != nil {
			t.Fatal(err)
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		back, err := FromRecord(r)
		if err != nil {
			t.Fatalf("%s: %v", e.Type(), err)
		}
		if diff := cmp.Diff(e, back); diff != "" {
			t.Errorf("%s did not survive its record (-want +got):\n%s", e.Type(), diff)
		}
	}
}

func TestRecordKeepsTheFieldNamesOfOlderLogs(t *testing.T) {
	// An answer and a vote as earlier versions wrote them.
	old := `[{"seq":3,"time":"2025-01-02T03:04:05Z","type":"new_answer","attempt":1,"epoch":1,"agent":"a","label":"agent1.1","text":"hi"},
	{"seq":4,"time":"2025-01-02T03:04:06Z","type":"vote_cast","epoch":1,"agent":"b","target":"a","target_label":"agent1","reason":"ok"},
	{"seq":5,"time":"2025-01-02T03:04:07Z","type":"run_started","epoch":0,"text":"q","agents":["a","b"]}]`
	var rs []Record
	if err := json.Unmarshal([]byte(old), &rs); err != nil {
		t.Fatal(err)
	}
	var got []Event
	for _, r := range rs {
		e, err := FromRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	a := got[0].(AnswerAccepted)
	v := got[1].(VoteAccepted)
	rs0 := got[2].(RunStarted)
	if a.Agent != "a" || a.Label != "agent1.1" || a.Content != "hi" || a.Head().Seq != 3 {
		t.Errorf("answer = %+v", a)
	}
	if v.Target != "a" || v.TargetLabel != "agent1" || v.Reason != "ok" {
		t.Errorf("vote = %+v", v)
	}
	if diff := cmp.Diff([]AgentInfo{{ID: "a"}, {ID: "b"}}, rs0.Team); diff != "" || rs0.Question != "q" {
		t.Errorf("run_started = %+v", rs0)
	}
	if _, err := FromRecord(Record{Type: "nonsense"}); err == nil {
		t.Error("FromRecord of an unknown type: no error")
	}
}

func TestDescribeSaysEveryStepAndNoDelta(t *testing.T) {
	for _, e := range samples() {
		d := Describe(e)
		if slices.Contains(Deltas, e.Type()) {
			if d != "" {
				t.Errorf("Describe(%s) = %q, want \"\" for a delta", e.Type(), d)
			}
			continue
		}
		if d == "" || d == string(e.Type()) {
			t.Errorf("Describe(%s) = %q, want words", e.Type(), d)
		}
		if agent := AgentOf(e); agent != "" && !contains(d, agent) {
			t.Errorf("Describe(%s) = %q does not name agent %s", e.Type(), d, agent)
		}
	}
	want := map[Type]string{
		TypeAnswerAccepted: "a answered agent1.1: answer",
		TypeVoteAccepted:   "b voted for c (agent3.1, shown as agent1): best",
		TypeBudgetExceeded: "budget reached, stopping: max_cost_usd",
		TypeTurnStarted:    "a working (sees 2 answers: agent1=c (agent3.1), agent2=a (agent1.1))",
		TypeToolCalled:     `a called search({"q":1}) → error found [1.5s]`,
		TypeToolProgress:   "a: mcp__s__crawl 2/5 (40%): page 2",
		TypeRunStarted:     "run started: 2 agents: a [sim/m, simulated], b",
	}
	for _, e := range samples() {
		if w, ok := want[e.Type()]; ok && Describe(e) != w {
			t.Errorf("Describe(%s) = %q, want %q", e.Type(), Describe(e), w)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
