package massgen

import (
	"context"
	"iter"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// Event is one thing that happened during a run, in the one event schema
// (docs/events.md): the Go form of the records coordination_events.jsonl,
// `massgen serve`'s /v1/runs/{id}/events and `--stream-events
// --event-schema 2` hold. Type is one of the EventType constants below.
type Event struct {
	V       int // the schema version, EventSchema
	Seq     uint64
	Time    time.Time
	Type    EventType
	Attempt int    // orchestration attempt, from 1
	Epoch   int    // accepted answers so far in this attempt
	Agent   string // real agent id

	Label        string   // an answer's stable label, agent<config position>.<revision>, e.g. "agent2.1"
	AnonLabel    string   // new_answer: the anonymous label the other agents see it under
	TargetAnswer string   // vote_cast: the stable label of the answer voted for
	Labels       []string // anonymous labels the agent was shown
	Text         string   // answer, streamed text, final answer, question
	Target       string   // the agent a vote is for, or whose answer caused a restart
	TargetLabel  string   // Target's anonymous label as the voter saw it
	Reason       string
	Err          string
	Status       string // run_finished: how the run ended
	Agents       []string
	Votes        map[string]int
	// The usage of the turn that ended with this event, if any.
	InputTokens  int64
	OutputTokens int64
	CostUSD      float64
	// tool_called: the tool is Text; previews of its arguments and result.
	Args, Result string
	IsError      bool
	Duration     time.Duration
	// Failure is a turn_failed, timeout or agent_failed event's failure as
	// data; Failures a failed run's, on run_finished.
	Failure  *Failure
	Failures []Failure
	// Where is a warning's config position ("config.yaml:12:3"), when it is
	// about one; its Text is the warning.
	Where string
}

// EventType names a kind of event: a string (an alias, so code that
// treats Type as a string keeps working), one of the constants below.
type EventType = string

// EventSchema is the version of the event schema.
const EventSchema = event.SchemaVersion

// The event types, in the order a run meets them.
const (
	EventRunStarted     EventType = EventType(event.TypeRunStarted)
	EventTurnStarted    EventType = EventType(event.TypeTurnStarted)
	EventTextDelta      EventType = EventType(event.TypeTextDelta)
	EventReasoningDelta EventType = EventType(event.TypeReasoningDelta)
	EventToolProgress   EventType = EventType(event.TypeToolProgress)
	EventToolCalled     EventType = EventType(event.TypeToolCalled)
	EventAnswer         EventType = EventType(event.TypeAnswerAccepted) // "new_answer"
	EventVote           EventType = EventType(event.TypeVoteAccepted)   // "vote_cast"
	EventActionRejected EventType = EventType(event.TypeActionRejected)
	EventTurnRestarted  EventType = EventType(event.TypeTurnRestarted)
	EventTurnFailed     EventType = EventType(event.TypeTurnFailed)
	EventTurnEnded      EventType = EventType(event.TypeTurnEnded)
	EventAgentFailed    EventType = EventType(event.TypeAgentFailed)
	EventTimeout        EventType = EventType(event.TypeTimeout)
	EventBudgetExceeded EventType = EventType(event.TypeBudgetExceeded)
	EventWinnerSelected EventType = EventType(event.TypeWinnerSelected)
	EventFinalStarted   EventType = EventType(event.TypeFinalStarted)
	EventFinalDelta     EventType = EventType(event.TypeFinalDelta)
	EventFinalAnswer    EventType = EventType(event.TypeFinalAnswer)
	EventPostEvaluation EventType = EventType(event.TypePostEvaluation)
	EventRunRestarted   EventType = EventType(event.TypeRunRestarted)
	EventRunFinished    EventType = EventType(event.TypeRunFinished)
	// EventWarning is a warning of the run (Text; Where for a config
	// position): what it does not do as asked, or could not keep. The
	// config's and the team's come before run_started.
	EventWarning EventType = EventType(event.TypeWarning)
)

// eventFrom is the one mapping from the run's events to the public type.
func eventFrom(e event.Event) Event {
	r := event.ToRecord(e)
	return Event{
		V: r.V, Seq: r.Seq, Time: r.Time, Type: string(r.Type), Attempt: r.Attempt, Epoch: r.Epoch, Agent: r.Agent,
		Label: r.Label, AnonLabel: r.AnonLabel, TargetAnswer: r.TargetAnswer, Labels: r.Labels, Text: r.Text,
		Target: r.Target, TargetLabel: r.TargetLabel, Reason: r.Reason, Err: r.Err, Status: r.Status, Agents: r.Agents,
		Votes: r.Votes, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CostUSD: r.CostUSD,
		Args: r.Args, Result: r.Result, IsError: r.IsError, Duration: r.ToolDuration(),
		Failure: r.Failure, Failures: r.Failures, Where: r.Where,
	}
}

// Stream runs like Run and yields the run's events while it goes:
//
//	events, result := massgen.Stream(ctx, question, opts)
//	for e := range events {
//		…
//	}
//	res, err := result()
//
// The run starts when events is ranged over, and ranging ends when the run
// has ended; breaking out of the loop early cancels the run. result waits
// for the run and returns what Run would; called without ranging over
// events, it runs the question with no events seen. A Stream runs its
// question once: events yields nothing a second time. Options.OnEvent, if
// set, is called too.
func Stream(ctx context.Context, question string, o Options) (events iter.Seq[Event], result func() (*Result, error)) {
	var (
		once sync.Once
		res  *Result
		err  error
	)
	run := func(yield func(Event) bool) {
		once.Do(func() {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			ch := make(chan Event)
			stopped := make(chan struct{})
			user := o.OnEvent
			o.OnEvent = func(e Event) {
				if user != nil {
					user(e)
				}
				select {
				case ch <- e:
				case <-stopped: // the caller stopped ranging: drop the rest
				}
			}
			go func() {
				defer close(ch)
				res, err = Run(ctx, question, o)
			}()
			for e := range ch {
				if !yield(e) {
					close(stopped)
					cancel()
					for range ch { // until Run has returned
					}
					return
				}
			}
		})
	}
	events = func(yield func(Event) bool) { run(yield) }
	result = func() (*Result, error) {
		run(func(Event) bool { return true })
		return res, err
	}
	return events, result
}
