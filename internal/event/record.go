package event

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/massgen/massgen/internal/coord"
)

// Record is the flat JSON form of an event, one object per event in
// coordination_events.json and coordination_events.jsonl. Its fields and
// tags are those of the event struct of earlier versions (type strings
// included), plus new ones, so readers of older logs keep working; which
// fields a type fills is said on each type's record method.
type Record struct {
	// V is the schema version, SchemaVersion: the same in the logs,
	// --stream-events=2, massgen serve's /v1/runs/{id}/events and the
	// library. Absent in logs written before it was added.
	V       int       `json:"v,omitempty"`
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Type    Type      `json:"type"`
	Attempt int       `json:"attempt,omitempty"`
	Epoch   int       `json:"epoch"`
	Agent   string    `json:"agent,omitempty"` // real agent id

	Label       string         `json:"label,omitempty"`        // stable answer label "agent<position>.<revision>"
	Labels      []string       `json:"labels,omitempty"`       // anonymous labels the agent was shown
	Text        string         `json:"text,omitempty"`         // answer, delta, final text, question, prompt, tool name
	Target      string         `json:"target,omitempty"`       // real id voted for / whose answer caused a restart
	TargetLabel string         `json:"target_label,omitempty"` // anonymous label of Target as the voter saw it
	Reason      string         `json:"reason,omitempty"`
	Err         string         `json:"error,omitempty"`
	Status      string         `json:"status,omitempty"`
	Agents      []string       `json:"agents,omitempty"`
	Votes       map[string]int `json:"votes,omitempty"`
	// Tokens are the usage of the turn that ended with this event, if any.
	InputTokens  int64   `json:"input_tokens,omitempty"`
	OutputTokens int64   `json:"output_tokens,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty"`

	// New in the typed-event format.
	AnonLabel    string      `json:"anon_label,omitempty"`    // anonymous label of an accepted answer
	TargetAnswer string      `json:"target_answer,omitempty"` // stable label of the answer voted for
	Answers      []AnswerRef `json:"answers,omitempty"`       // label ↔ agent pairs (shown, or the answer set)
	Team         []AgentInfo `json:"team,omitempty"`          // run_started: the team with backends
	Args         string      `json:"args,omitempty"`          // tool_called: arguments preview
	Result       string      `json:"result,omitempty"`        // tool_called: result preview
	IsError      bool        `json:"is_error,omitempty"`      // tool_called: the tool failed
	DurationMS   float64     `json:"duration_ms,omitempty"`   // tool_called: how long it ran, to the microsecond
	ToolRounds   int         `json:"tool_rounds,omitempty"`   // turn_ended: responses of the turn that ran tools
	Progress     float64     `json:"progress,omitempty"`      // tool_progress: how far (of Total)
	Total        float64     `json:"total,omitempty"`         // tool_progress: of how much (0: unknown)
	Fallback     string      `json:"fallback,omitempty"`      // run_finished: why the stored answer is final
	GraceExpired bool        `json:"grace_expired,omitempty"` // run_finished: the presentation ran out of grace
	Tool         string      `json:"tool,omitempty"`          // text_delta: the workflow tool whose argument the text is (new_answer)
	Where        string      `json:"where,omitempty"`         // warning: the config position it is about

	// Failures as data (turn_failed, timeout, agent_failed: Failure;
	// run_finished of a failed run: Failures); Err stays their text.
	Failure  *coord.Failure  `json:"failure,omitempty"`
	Failures []coord.Failure `json:"failures,omitempty"`

	// The result of a run, on the "finished" line that ends an event
	// stream (--stream-events --event-schema 2): how the process exits,
	// where the logs and the answer are, and what each agent spent.
	ExitCode   *int                   `json:"exit_code,omitempty"`
	LogDir     string                 `json:"log_dir,omitempty"`
	AnswerFile string                 `json:"answer_file,omitempty"`
	Usage      map[string]UsageRecord `json:"usage,omitempty"`
}

// TypeFinished is the type of the line that ends an event stream with the
// run's result. It is not an event of the run (FromRecord refuses it):
// the stream's writer adds it once the run has ended.
const TypeFinished Type = "finished"

// UsageRecord is one agent's usage in a record.
type UsageRecord struct {
	InputTokens     int64   `json:"input_tokens"`
	OutputTokens    int64   `json:"output_tokens"`
	ReasoningTokens int64   `json:"reasoning_tokens,omitempty"`
	CachedTokens    int64   `json:"cached_tokens,omitempty"`
	CostUSD         float64 `json:"cost_usd,omitempty"`
}

// SchemaVersion is the version of the event schema: the JSON form of
// Record. It changes only when a field's or a type's meaning changes;
// within a version, fields and types may be added, and readers ignore what
// they do not know. Version 1 was --stream-events' own renamed form (still
// written by --stream-events without a version); 2 is this one schema.
const SchemaVersion = 2

// ToRecord flattens e.
func ToRecord(e Event) Record {
	r := e.record()
	h := e.Head()
	r.V, r.Seq, r.Time, r.Type, r.Attempt, r.Epoch = SchemaVersion, h.Seq, h.Time, e.Type(), h.Attempt, h.Epoch
	return r
}

// AgentOf is the real id of the agent an event is about, "" for run-wide
// events.
func AgentOf(e Event) string {
	switch e := e.(type) {
	case TextDelta:
		return e.Agent
	case ReasoningDelta:
		return e.Agent
	case FinalDelta:
		return e.Agent
	}
	return e.record().Agent
}

// FromRecord is the inverse of ToRecord: it rebuilds the typed event from
// its record (replaying a log). Unknown types are an error.
func FromRecord(r Record) (Event, error) {
	h := Header{Seq: r.Seq, Time: r.Time, Attempt: r.Attempt, Epoch: r.Epoch}
	u := Usage{r.InputTokens, r.OutputTokens, r.CostUSD}
	var e Event
	switch r.Type {
	case TypeRunStarted:
		team := slices.Clone(r.Team)
		if team == nil {
			for _, id := range r.Agents { // an older log: ids only
				team = append(team, AgentInfo{ID: id})
			}
		}
		e = RunStarted{Question: r.Text, Team: team}
	case TypeTurnStarted:
		shown := slices.Clone(r.Answers)
		if shown == nil {
			for _, l := range r.Labels {
				shown = append(shown, AnswerRef{Label: l})
			}
		}
		e = TurnStarted{Agent: r.Agent, Prompt: r.Text, Shown: shown, Reason: r.Reason}
	case TypeTextDelta:
		e = TextDelta{Agent: r.Agent, Text: r.Text, Tool: r.Tool}
	case TypeReasoningDelta:
		e = ReasoningDelta{Agent: r.Agent, Text: r.Text}
	case TypeToolCalled:
		e = ToolCalled{Agent: r.Agent, Tool: r.Text, Args: r.Args, Result: r.Result, IsError: r.IsError,
			Duration: r.ToolDuration()}
	case TypeModelCalled:
		e = ModelCalled{Agent: r.Agent, Model: r.Text, Usage: u, Duration: r.ToolDuration(), Failure: cloneFailure(r.Failure)}
	case TypeToolProgress:
		e = ToolProgress{Agent: r.Agent, Tool: r.Text, Progress: r.Progress, Total: r.Total, Message: r.Result}
	case TypeAnswerAccepted:
		e = AnswerAccepted{Agent: r.Agent, Content: r.Text, Label: r.Label, AnonLabel: r.AnonLabel, Answers: slices.Clone(r.Answers)}
	case TypeVoteAccepted:
		e = VoteAccepted{Agent: r.Agent, Target: r.Target, TargetLabel: r.TargetLabel, TargetAnswer: r.TargetAnswer, Reason: r.Reason}
	case TypeActionRejected:
		e = ActionRejected{Agent: r.Agent, Reason: r.Reason}
	case TypeTurnRestarted:
		e = TurnRestarted{Agent: r.Agent, Cause: r.Target, Reason: r.Reason}
	case TypeTurnFailed:
		e = TurnFailed{Agent: r.Agent, Err: r.Err, Failure: cloneFailure(r.Failure)}
	case TypeTurnEnded:
		e = TurnEnded{Agent: r.Agent, Usage: u, ToolRounds: r.ToolRounds}
	case TypeAgentFailed:
		e = AgentFailed{Agent: r.Agent, Err: r.Err, Reason: r.Reason, Failure: cloneFailure(r.Failure)}
	case TypeTimeout:
		e = Timeout{Agent: r.Agent, Err: r.Err, Reason: r.Reason, Failure: cloneFailure(r.Failure)}
	case TypeBudgetExceeded:
		e = BudgetExceeded{Reason: r.Reason}
	case TypeWinnerSelected:
		e = WinnerSelected{Agent: r.Agent, Votes: cloneVotes(r.Votes), How: r.Reason, Label: r.Label, Answers: slices.Clone(r.Answers)}
	case TypeFinalStarted:
		e = FinalStarted{Agent: r.Agent, Prompt: r.Text, Mode: r.Status}
	case TypeFinalDelta:
		e = FinalDelta{Agent: r.Agent, Text: r.Text}
	case TypeFinalAnswer:
		e = FinalAnswer{Agent: r.Agent, Text: r.Text, Reason: r.Reason, Usage: u}
	case TypePostEvaluation:
		e = PostEvaluation{Agent: r.Agent, Verdict: r.Text, Reason: r.Reason, Usage: u}
	case TypeRunRestarted:
		e = RunRestarted{Agent: r.Agent, Reason: r.Reason, Instructions: r.Text}
	case TypeWarning:
		e = Warning{Agent: r.Agent, Where: r.Where, Text: r.Text}
	case TypeRunFinished:
		e = RunFinished{Status: r.Status, Winner: r.Agent, Err: r.Err, Fallback: r.Fallback, GraceExpired: r.GraceExpired,
			Failures: slices.Clone(r.Failures)}
	default:
		return nil, fmt.Errorf("event: unknown type %q", r.Type)
	}
	return e.withHead(h), nil
}

// cloneFailure copies f, so that an event and its record never share one.
func cloneFailure(f *coord.Failure) *coord.Failure {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

func cloneVotes(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}

func labelsOf(refs []AnswerRef) []string {
	if len(refs) == 0 {
		return nil
	}
	out := make([]string, len(refs))
	for i, a := range refs {
		out[i] = a.Label
	}
	return out
}

func usageRecord(r Record, u Usage) Record {
	r.InputTokens, r.OutputTokens, r.CostUSD = u.InputTokens, u.OutputTokens, u.CostUSD
	return r
}

// Text = question; Agents = ids, Team = the team with backends.
func (e RunStarted) record() Record {
	ids := make([]string, len(e.Team))
	for i, a := range e.Team {
		ids[i] = a.ID
	}
	return Record{Text: e.Question, Agents: ids, Team: slices.Clone(e.Team)}
}

// Text = prompt; Labels = anonymous labels shown, Answers = the pairs.
func (e TurnStarted) record() Record {
	return Record{Agent: e.Agent, Text: e.Prompt, Labels: labelsOf(e.Shown), Answers: slices.Clone(e.Shown), Reason: e.Reason}
}

func (e TextDelta) record() Record      { return Record{Agent: e.Agent, Text: e.Text, Tool: e.Tool} }
func (e ReasoningDelta) record() Record { return Record{Agent: e.Agent, Text: e.Text} }
func (e FinalDelta) record() Record     { return Record{Agent: e.Agent, Text: e.Text} }

// Text = tool name.
func (e ToolCalled) record() Record {
	return Record{Agent: e.Agent, Text: e.Tool, Args: e.Args, Result: e.Result, IsError: e.IsError,
		DurationMS: float64(e.Duration.Round(time.Microsecond)) / float64(time.Millisecond)}
}

// Text = model; the request's usage; DurationMS = how long it took.
func (e ModelCalled) record() Record {
	return usageRecord(Record{Agent: e.Agent, Text: e.Model, Failure: cloneFailure(e.Failure),
		DurationMS: float64(e.Duration.Round(time.Microsecond)) / float64(time.Millisecond)}, e.Usage)
}

// Text = tool name; Result = the message.
func (e ToolProgress) record() Record {
	return Record{Agent: e.Agent, Text: e.Tool, Progress: e.Progress, Total: e.Total, Result: e.Message}
}

// ToolDuration is how long a tool_called record's tool ran. The log keeps
// milliseconds with a fraction, because a local tool often takes less than
// one: a whole number would say 0 for it.
func (r Record) ToolDuration() time.Duration {
	return time.Duration(math.Round(r.DurationMS*1000)) * time.Microsecond
}

// Text = answer; Label = stable label; AnonLabel; Answers = the new set.
func (e AnswerAccepted) record() Record {
	return Record{Agent: e.Agent, Text: e.Content, Label: e.Label, AnonLabel: e.AnonLabel, Answers: slices.Clone(e.Answers)}
}

func (e VoteAccepted) record() Record {
	return Record{Agent: e.Agent, Target: e.Target, TargetLabel: e.TargetLabel, TargetAnswer: e.TargetAnswer, Reason: e.Reason}
}

func (e ActionRejected) record() Record { return Record{Agent: e.Agent, Reason: e.Reason} }

// Target = the author of the answer that caused the restart.
func (e TurnRestarted) record() Record {
	return Record{Agent: e.Agent, Target: e.Cause, Reason: e.Reason}
}

func (e TurnFailed) record() Record {
	return Record{Agent: e.Agent, Err: e.Err, Failure: cloneFailure(e.Failure)}
}
func (e TurnEnded) record() Record {
	return usageRecord(Record{Agent: e.Agent, ToolRounds: e.ToolRounds}, e.Usage)
}
func (e AgentFailed) record() Record {
	return Record{Agent: e.Agent, Err: e.Err, Reason: e.Reason, Failure: cloneFailure(e.Failure)}
}
func (e Timeout) record() Record {
	return Record{Agent: e.Agent, Err: e.Err, Reason: e.Reason, Failure: cloneFailure(e.Failure)}
}
func (e BudgetExceeded) record() Record { return Record{Reason: e.Reason} }

// Reason = how the winner was chosen; Label = the winning answer's stable label.
func (e WinnerSelected) record() Record {
	return Record{Agent: e.Agent, Votes: cloneVotes(e.Votes), Reason: e.How, Label: e.Label,
		Labels: labelsOf(e.Answers), Answers: slices.Clone(e.Answers)}
}

// Text = prompt; Status = mode.
func (e FinalStarted) record() Record { return Record{Agent: e.Agent, Text: e.Prompt, Status: e.Mode} }

func (e FinalAnswer) record() Record {
	return usageRecord(Record{Agent: e.Agent, Text: e.Text, Reason: e.Reason}, e.Usage)
}

// Text = verdict.
func (e PostEvaluation) record() Record {
	return usageRecord(Record{Agent: e.Agent, Text: e.Verdict, Reason: e.Reason}, e.Usage)
}

// Text = instructions.
func (e RunRestarted) record() Record {
	return Record{Agent: e.Agent, Reason: e.Reason, Text: e.Instructions}
}

// Agent = winner.
func (e RunFinished) record() Record {
	return Record{Agent: e.Winner, Status: e.Status, Err: e.Err, Fallback: e.Fallback, GraceExpired: e.GraceExpired,
		Failures: slices.Clone(e.Failures)}
}
