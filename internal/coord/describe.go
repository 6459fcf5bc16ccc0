package coord

import (
	"fmt"
	"sort"
	"strings"
)

// The transcript form of a run: one line per input, in the syntax of the
// golden transcripts' scripts (testdata/*.script), each followed by its
// commands and the agents' state. The golden transcripts and `massgen
// replay` print it with the same functions, so a recorded run reads like
// a transcript, and a transcript is checked the way a run is.

// DescribeInput is an input as a transcript script line: `start`,
// `answer AGENT TURN "content"`, `vote AGENT TURN SEEN LABEL "reason"`,
// `stop AGENT TURN SEEN STATUS "summary"`,
// `checklist AGENT TURN SEEN "scores" [report "path" CHARS "problem"]`, `draft AGENT TURN SEEN "arguments"`, `fail AGENT TURN "error" [circuit]`, `timeout`, `budget "reason"`,
// `presented "text" [calls=N]`, `presentation-failed "error"`,
// `evaluated submit`, `evaluated restart "reason" "instructions"`,
// `grace`, `round AGENT TURN soft|hard|cutoff`, `criteria "category: text"…`,
// `criteria-for AGENT "category: text"…`,
// `interrupt`.
func DescribeInput(in Input) string {
	switch in := in.(type) {
	case Start:
		return "start"
	case Proposed:
		if in.Action.Kind == ActChecklist {
			s := fmt.Sprintf("checklist %s %d %d %q", in.Agent, in.Turn, in.Seen, in.Action.Content)
			if r := in.Action.Report; r != nil {
				s += fmt.Sprintf(" report %q %d %q", r.Path, r.Chars, r.Problem)
			}
			return s
		}
		if in.Action.Kind == ActDraft {
			return fmt.Sprintf("draft %s %d %d %q", in.Agent, in.Turn, in.Seen, in.Action.Content)
		}
		if in.Action.Kind == ActStop {
			return fmt.Sprintf("stop %s %d %d %s %q", in.Agent, in.Turn, in.Seen, in.Action.Label, in.Action.Reason)
		}
		if in.Action.Kind == ActVote {
			return fmt.Sprintf("vote %s %d %d %s %q", in.Agent, in.Turn, in.Seen, in.Action.Label, in.Action.Reason)
		}
		return fmt.Sprintf("answer %s %d %q", in.Agent, in.Turn, in.Action.Content)
	case TurnFailed:
		s := fmt.Sprintf("fail %s %d %q", in.Agent, in.Turn, in.Err)
		if in.CircuitOpen {
			s += " circuit"
		}
		if f := in.Failure; f != nil && f.Kind != "" {
			s += fmt.Sprintf(" failure=%s,%d", f.Kind, f.Status)
			if f.Retryable {
				s += ",retryable"
			}
		}
		return s
	case DeadlinePassed:
		return "timeout"
	case BudgetSpent:
		return fmt.Sprintf("budget %q", in.Reason)
	case Presented:
		if in.Err != "" {
			return fmt.Sprintf("presentation-failed %q", in.Err)
		}
		s := fmt.Sprintf("presented %q", in.Text)
		if in.ToolCalls > 0 {
			s += fmt.Sprintf(" calls=%d", in.ToolCalls)
		}
		return s
	case Evaluated:
		if in.Restart {
			return fmt.Sprintf("evaluated restart %q %q", in.Reason, in.Instructions)
		}
		return "evaluated submit"
	case GraceExpired:
		return "grace"
	case RoundTimeUp:
		return fmt.Sprintf("round %s %d %s", in.Agent, in.Turn, in.Stage)
	case CriteriaSet:
		s := "criteria"
		if in.Agent != "" {
			s = "criteria-for " + in.Agent
		}
		for _, c := range in.Criteria {
			s += fmt.Sprintf(" %q", NormalCategory(c.Category)+": "+c.Text)
		}
		return s
	case Interrupted:
		return "interrupt"
	}
	return fmt.Sprintf("%#v", in)
}

// DescribeCommand is a command as a transcript line.
func DescribeCommand(c Command) string {
	switch c := c.(type) {
	case Reply:
		return describeVerdict(c.Verdict)
	case StartTurn:
		s := fmt.Sprintf("start %s turn=%d epoch=%d answers=%s", c.Agent, c.Turn, c.Epoch, answerList(c.Answers))
		if c.Attempt > 1 {
			s += fmt.Sprintf(" attempt=%d", c.Attempt)
		}
		if c.Delay > 0 {
			s += fmt.Sprintf(" after=%s", c.Delay)
		}
		return s
	case CancelTurn:
		return fmt.Sprintf("cancel %s turn=%d (%s)", c.Agent, c.Turn, c.Reason)
	case Inject:
		return fmt.Sprintf("inject %s turn=%d epoch=%d answers=%s", c.Agent, c.Turn, c.Epoch, answerList(c.Answers))
	case AgentFailed:
		return fmt.Sprintf("agent-failed %s after %s: %s", c.Agent, c.Reason, c.Err)
	case Present:
		s := fmt.Sprintf("present winner=%s (%s) answer=%q tally={%s}", c.Winner, c.How, c.Answer.Content, describeTally(c.Tally))
		if c.Skip != "" {
			s += fmt.Sprintf(" skip=%q", c.Skip)
		}
		return s
	case AnswerDirect:
		return "answer-direct " + c.Agent
	case Final:
		s := fmt.Sprintf("final %s %q (%s)", c.Agent, c.Text, c.Reason)
		if c.Fallback {
			s += " fallback"
		}
		return s
	case Evaluate:
		return fmt.Sprintf("evaluate %s final=%q", c.Agent, c.Final)
	case Restart:
		return fmt.Sprintf("restart attempt=%d asked by %s: %q, %q", c.Attempt, c.Agent, c.Reason, c.Instructions)
	case CancelCall:
		return fmt.Sprintf("cancel-call (%s)", c.Reason)
	case SetTimer:
		if c.Timer == TimerRound {
			return fmt.Sprintf("timer round %s turn=%d %s after=%s", c.Agent, c.Turn, c.Stage, c.After)
		}
		return fmt.Sprintf("timer %s after=%s", c.Timer, c.After)
	case WrapUp:
		s := fmt.Sprintf("wrap-up %s turn=%d", c.Agent, c.Turn)
		if c.Hard {
			s += " hard"
		}
		return s + fmt.Sprintf(" msg=%q", c.Message)
	case Finish:
		s := fmt.Sprintf("finish %s attempt=%d", c.Status, c.Attempt)
		if c.Winner != "" {
			s += fmt.Sprintf(" winner=%s (%s) tally={%s}", c.Winner, c.How, describeTally(c.Tally))
		}
		if c.Final != "" {
			s += fmt.Sprintf(" final=%q", c.Final)
		}
		if c.Deadline {
			s += " deadline"
		}
		if c.GraceExpired {
			s += " grace-expired"
		}
		if c.Fallback != "" {
			s += fmt.Sprintf(" fallback=%q", c.Fallback)
		}
		if c.Reason != "" {
			s += ": " + c.Reason
		}
		return s
	}
	return fmt.Sprintf("%#v", c)
}

// DescribeState is the machine's state after a step, as a transcript's
// "= …" line: the epoch and each agent's status in config order.
func (m *Machine) DescribeState() string {
	s := make([]string, len(m.agents))
	for i, a := range m.agents {
		s[i] = a.id + ":" + a.status.String()
		if a.status == Voted && a.vote != nil && a.vote.Stop != "" {
			s[i] = a.id + ":stopped(" + a.vote.Stop + ")"
		}
		if m.phase == phaseCoordinating && m.paused(a) {
			s[i] += "(paused)"
		}
	}
	return fmt.Sprintf("epoch %d; %s", m.epoch, strings.Join(s, " "))
}

func describeVerdict(v Verdict) string {
	s := "verdict " + v.Outcome.String()
	if v.Label != "" {
		s += " label=" + v.Label
	}
	if v.Target != "" {
		s += " target=" + v.Target
	}
	if v.Message != "" {
		s += fmt.Sprintf(" msg=%q", v.Message)
	}
	return s
}

func describeTally(t map[string]int) string {
	ids := make([]string, 0, len(t))
	for id := range t {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s:%d", id, t[id])
	}
	return strings.Join(parts, " ")
}

func answerList(as []Answer) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = fmt.Sprintf("%s=%s.%d", a.Label, a.Agent, a.Rev)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// AgentRef names an agent at the start of a message: "agent critic", or the
// bare id when it already says agent ("agent" — the one agent of --model —
// "agent1", "agent_a"), so that no message reads "agent agent: …".
func AgentRef(id string) string {
	if strings.HasPrefix(strings.ToLower(id), "agent") {
		return id
	}
	return "agent " + id
}
