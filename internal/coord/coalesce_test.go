package coord

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCoalesce(t *testing.T) {
	one := []Answer{{Label: "agent1", Agent: "a", Content: "x", Rev: 1}}
	two := append(one, Answer{Label: "agent2", Agent: "b", Content: "y", Rev: 1})
	reply := Reply{Agent: "b", Turn: 2, Verdict: Verdict{Outcome: Accepted, Label: "agent2"}}
	tests := []struct {
		name     string
		in, want []Command
	}{
		{
			name: "a turn started and cancelled in one batch is never started",
			in: []Command{
				StartTurn{Agent: "a", Turn: 3, Epoch: 1, Answers: one},
				reply,
				CancelTurn{Agent: "a", Turn: 3, Reason: "new answer from b", Cause: "b"},
				StartTurn{Agent: "a", Turn: 4, Epoch: 2, Answers: two},
			},
			want: []Command{reply, StartTurn{Agent: "a", Turn: 4, Epoch: 2, Answers: two}},
		},
		{
			name: "the round timer of a turn never started goes with it",
			in: []Command{
				StartTurn{Agent: "a", Turn: 3, Epoch: 1, Answers: one},
				SetTimer{Timer: TimerRound, After: 300, Agent: "a", Turn: 3, Stage: RoundSoft},
				CancelTurn{Agent: "a", Turn: 3, Reason: "new answer from b", Cause: "b"},
				StartTurn{Agent: "a", Turn: 4, Epoch: 2, Answers: two},
				SetTimer{Timer: TimerRound, After: 300, Agent: "a", Turn: 4, Stage: RoundSoft},
			},
			want: []Command{StartTurn{Agent: "a", Turn: 4, Epoch: 2, Answers: two},
				SetTimer{Timer: TimerRound, After: 300, Agent: "a", Turn: 4, Stage: RoundSoft}},
		},
		{
			name: "answers injected into a turn not yet started are folded into its start",
			in: []Command{
				StartTurn{Agent: "a", Turn: 3, Epoch: 1, Answers: one, Delay: 1000},
				Inject{Agent: "a", Turn: 3, Epoch: 2, Answers: two},
			},
			want: []Command{StartTurn{Agent: "a", Turn: 3, Epoch: 2, Answers: two, Delay: 1000}},
		},
		{
			name: "cancelling or injecting a turn started earlier passes through",
			in: []Command{
				CancelTurn{Agent: "a", Turn: 1, Reason: "r"},
				Inject{Agent: "c", Turn: 2, Epoch: 2, Answers: two},
				Finish{Status: RunCompleted},
			},
			want: []Command{
				CancelTurn{Agent: "a", Turn: 1, Reason: "r"},
				Inject{Agent: "c", Turn: 2, Epoch: 2, Answers: two},
				Finish{Status: RunCompleted},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Coalesce(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownKindsAreRefused(t *testing.T) {
	if _, err := UnmarshalInput([]byte(`{"kind":"no_such_input"}`)); err == nil {
		t.Error("an unknown input kind decoded")
	}
	if _, err := UnmarshalCommand([]byte(`{"kind":"start"}`)); err == nil {
		t.Error("an input decoded as a command")
	}
}

func TestSettingsDefaultsAreAppliedOnce(t *testing.T) {
	got := Settings{}.WithDefaults()
	want := Settings{MaxAnswers: DefaultMaxAnswers, FailureBudget: DefaultFailureBudget, Timeout: DefaultTimeout,
		TurnTimeout: DefaultTurnTimeout, PresentationGrace: DefaultPresentationGrace,
		RetryBackoff: DefaultRetryBackoff, RetryBackoffMax: DefaultRetryBackoffMax, FairnessLeadCap: DefaultFairnessLeadCap,
		RoundGrace: DefaultRoundGrace, MaxInjections: DefaultMaxInjections}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if got.WithDefaults() != got {
		t.Error("WithDefaults is not idempotent")
	}
	kept := Settings{MaxAnswers: Unlimited, TurnTimeout: -1, FairnessLeadCap: FairnessOff}.WithDefaults()
	if kept.MaxAnswers != Unlimited || kept.TurnTimeout != -1 || kept.FairnessLeadCap != FairnessOff {
		t.Errorf("explicit 'none' values were replaced: %+v", kept)
	}
	for _, s := range []string{"", "lenient", "balanced", "strict"} {
		if _, err := ParseNovelty(s); err != nil {
			t.Errorf("ParseNovelty(%q): %v", s, err)
		}
	}
	if _, err := ParseNovelty("lenientt"); err == nil {
		t.Error("an unknown novelty level parsed (it used to mean lenient silently)")
	}
	if _, err := ParseRestartPolicy("cancel"); err == nil {
		t.Error("an unknown restart policy parsed")
	}
}
