package event

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Describe says e in words for people, on one line: the plain display,
// massgen.log and the servers' progress lines all use it, so a run reads
// the same everywhere. Streamed deltas are text, not steps: they describe
// as "". Every other kind says something.
func Describe(e Event) string {
	switch e := e.(type) {
	case RunStarted:
		team := make([]string, len(e.Team))
		for i, a := range e.Team {
			team[i] = a.String()
		}
		return fmt.Sprintf("run started: %s: %s", plural(len(e.Team), "agent"), strings.Join(team, ", "))
	case TurnStarted:
		if len(e.Shown) == 0 {
			return e.Agent + " working"
		}
		return fmt.Sprintf("%s working (sees %s: %s)", e.Agent, plural(len(e.Shown), "answer"), refs(e.Shown))
	case TextDelta, ReasoningDelta, FinalDelta:
		return ""
	case ToolCalled:
		s := fmt.Sprintf("%s called %s(%s)", e.Agent, e.Tool, clip(e.Args, 80))
		if e.IsError {
			s += " → error"
		} else {
			s += " →"
		}
		if e.Result != "" {
			s += " " + clip(e.Result, 80)
		}
		return s + " [" + Took(e.Duration) + "]"
	case ToolProgress:
		s := e.Agent + ": " + e.Tool
		switch {
		case e.Total > 0:
			s += fmt.Sprintf(" %g/%g (%.0f%%)", e.Progress, e.Total, 100*e.Progress/e.Total)
		case e.Progress > 0:
			s += fmt.Sprintf(" %g", e.Progress)
		}
		if e.Message != "" {
			s += ": " + clip(e.Message, 120)
		}
		return s
	case AnswerAccepted:
		// Not the anonymous label it got: labels are renumbered as answers
		// come (agent1 is the first author in config order that has one), so
		// "shown as agent1" on successive answers of different agents only
		// confused; the "working (sees …)" lines and the votes say who is who.
		s := e.Agent + " answered " + or(e.Label, "?")
		if e.Content != "" {
			s += ": " + clip(e.Content, 70)
		}
		return s
	case VoteAccepted:
		if stop, ok := strings.CutPrefix(e.Reason, "stop ("); ok && e.Agent == e.Target {
			// decomposition mode's stop, counted like a vote for its own work
			return e.Agent + " stopped (" + clip(stop, 90)
		}
		s := e.Agent + " voted for " + e.Target
		switch {
		case e.TargetAnswer != "" && e.TargetLabel != "":
			s += " (" + e.TargetAnswer + ", shown as " + e.TargetLabel + ")"
		case e.TargetAnswer != "" || e.TargetLabel != "":
			s += " (" + e.TargetAnswer + e.TargetLabel + ")"
		}
		if e.Reason != "" {
			s += ": " + clip(e.Reason, 80)
		}
		return s
	case ActionRejected:
		return fmt.Sprintf("%s: action rejected: %s", e.Agent, clip(e.Reason, 120))
	case TurnRestarted:
		return fmt.Sprintf("%s restarted: %s", e.Agent, or(e.Reason, "new answer from "+e.Cause))
	case TurnFailed:
		return fmt.Sprintf("%s turn failed: %s", e.Agent, clip(e.Err, 200))
	case ModelCalled:
		s := fmt.Sprintf("%s called %s: %s in %s", e.Agent, e.Model, e.Usage, e.Duration.Round(time.Millisecond))
		if e.Failure != nil {
			s += ": " + clip(e.Failure.Message, 200)
		}
		return s
	case TurnEnded:
		s := fmt.Sprintf("%s turn ended: %s", e.Agent, e.Usage)
		if e.ToolRounds > 0 {
			s += ", " + plural(e.ToolRounds, "tool round")
		}
		return s
	case AgentFailed:
		s := e.Agent + " failed and left the run"
		if e.Reason != "" {
			s += " after " + e.Reason
		}
		return s + ": " + clip(e.Err, 200)
	case Timeout:
		if e.Agent == "" {
			return "timeout: " + e.Reason
		}
		return fmt.Sprintf("%s turn timed out: %s", e.Agent, clip(or(e.Err, e.Reason), 200))
	case BudgetExceeded:
		return "budget reached, stopping: " + e.Reason
	case Warning:
		return e.Line()
	case WinnerSelected:
		s := "winner: " + e.Agent
		if e.Label != "" {
			s += " with " + e.Label
		}
		if e.How != "" {
			return s + fmt.Sprintf(" (%s; %s)", e.How, Tally(e.Votes))
		}
		return s + " (" + Tally(e.Votes) + ")"
	case FinalStarted:
		return e.Agent + " is writing the final answer"
	case FinalAnswer:
		if e.Reason == "" || e.Reason == "presentation" {
			return fmt.Sprintf("final answer by %s (%d chars)", e.Agent, len([]rune(e.Text)))
		}
		return fmt.Sprintf("final answer by %s: %s", e.Agent, e.Reason)
	case PostEvaluation:
		s := fmt.Sprintf("post-evaluation by %s: %s", e.Agent, e.Verdict)
		if e.Reason != "" {
			s += " (" + clip(e.Reason, 200) + ")"
		}
		return s
	case RunRestarted:
		return "orchestration restarted: " + clip(e.Reason, 200)
	case RunFinished:
		s := "run " + e.Status
		if e.Winner != "" && e.Status == "completed" {
			s += " (winner " + e.Winner + ")"
		}
		return s
	}
	return string(e.Type())
}

// Describe says e as the package's Describe does, except the run's last
// event: RunFinished is told with what the view knows by then, the whole
// run in one line (Summary). The plain display and the servers' progress
// lines end with it. A nil view says e as Describe does.
func (v *View) Describe(e Event) string {
	if f, ok := e.(RunFinished); ok && v != nil {
		s := v.Snapshot(f.Time)
		return s.Summary()
	}
	return Describe(e)
}

// Summary says where the run stands, on one line: its status, the winner
// with its answer and the tally, how many answers it took (and attempts,
// past the first), the agents that left, and what it spent. For example
// "run completed: winner a with agent1.2 (plurality; votes a=2 b=1);
// 3 answers; 1200 in, 340 out tokens, $0.0021".
func (s *Snapshot) Summary() string {
	head := "run " + s.Status
	if s.Winner != "" && s.Status == "completed" {
		head += ": winner " + s.Winner
		if s.WinnerLabel != "" {
			head += " with " + s.WinnerLabel
		}
		if s.How != "" {
			head += fmt.Sprintf(" (%s; %s)", s.How, Tally(s.Tally))
		} else {
			head += " (" + Tally(s.Tally) + ")"
		}
	} else if len(s.Tally) > 0 {
		head += ": " + Tally(s.Tally)
	}
	parts := []string{head}
	answers := "no answers"
	if len(s.Answers) > 0 {
		answers = plural(len(s.Answers), "answer")
	}
	if s.Attempt > 1 {
		answers += fmt.Sprintf(" in %d attempts", s.Attempt)
	}
	parts = append(parts, answers)
	var failed []string
	for _, a := range s.Agents {
		if a.Status == StatusFailed {
			failed = append(failed, a.ID)
		}
	}
	if len(failed) > 0 {
		parts = append(parts, "left the run: "+strings.Join(failed, ", "))
	}
	if t := s.Tools(); t != "" {
		parts = append(parts, t)
	}
	return strings.Join(append(parts, s.Usage.String()), "; ")
}

// Tools says the run's tool use over every agent, "" when there was none:
// "5 tool calls (1 failed) in 3 rounds".
func (s *Snapshot) Tools() string {
	var calls, errs, rounds int
	for _, a := range s.Agents {
		calls, errs, rounds = calls+a.ToolCalls, errs+a.ToolErrors, rounds+a.ToolRounds
	}
	return ToolUse(calls, errs, rounds)
}

// ToolUse says tool-use counts: "5 tool calls (1 failed) in 3 rounds", ""
// when there were no calls.
func ToolUse(calls, errs, rounds int) string {
	if calls == 0 {
		return ""
	}
	s := plural(calls, "tool call")
	if errs > 0 {
		s += fmt.Sprintf(" (%d failed)", errs)
	}
	if rounds > 0 {
		s += " in " + plural(rounds, "round")
	}
	return s
}

// Took says how long something short took, to a precision that suits it:
// "42µs", "12ms", "1.5s".
func Took(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(100 * time.Millisecond).String()
	}
}

// String is "id [backend/model]" (", simulated" when it is).
func (a AgentInfo) String() string {
	if a.Backend == "" && a.Model == "" {
		return a.ID
	}
	sim := ""
	if a.Simulated {
		sim = ", simulated"
	}
	return fmt.Sprintf("%s [%s/%s%s]", a.ID, a.Backend, a.Model, sim)
}

// String is "12 in, 3 out tokens" (and the cost when known).
func (u Usage) String() string {
	s := fmt.Sprintf("%d in, %d out tokens", u.InputTokens, u.OutputTokens)
	if u.CostUSD > 0 {
		s += fmt.Sprintf(", $%.4f", u.CostUSD)
	}
	return s
}

// Tally says a vote count, ids sorted: "votes a=2 b=1", or "no votes".
func Tally(votes map[string]int) string {
	if len(votes) == 0 {
		return "no votes"
	}
	parts := make([]string, 0, len(votes))
	for _, id := range slices.Sorted(maps.Keys(votes)) {
		parts = append(parts, fmt.Sprintf("%s=%d", id, votes[id]))
	}
	return "votes " + strings.Join(parts, " ")
}

// refs says answer pairs: "agent1=c (agent3.1), agent2=a (agent1.1)".
func refs(rs []AnswerRef) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		switch {
		case r.Agent == "":
			parts[i] = r.Label
		case r.Answer == "":
			parts[i] = r.Label + "=" + r.Agent
		default:
			parts[i] = fmt.Sprintf("%s=%s (%s)", r.Label, r.Agent, r.Answer)
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// clip shortens s to at most n runes, on one line, marking the cut with "…".
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:max(0, n-1)]) + "…"
	}
	return s
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
