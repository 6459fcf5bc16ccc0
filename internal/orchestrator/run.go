package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

// Run coordinates the team on question until a final answer, a failure, the
// deadline or cancellation of ctx. It returns once every goroutine it
// started has ended.
func Run(ctx context.Context, question string, o Options) *Result {
	o.defaults()
	r := &runner{
		o: o, question: question, byID: map[string]*Agent{}, pos: map[string]int{},
		m:        coord.New(o.MachineConfig()),
		inbox:    make(chan inboxMsg),
		loopDone: make(chan struct{}),
		live:     map[coord.TurnID]*liveTurn{},
		replies:  map[coord.TurnID]chan coord.Verdict{},
		timers:   map[timerKey]*time.Timer{},
		views:    map[string]*viewGate{}, lastTask: map[string]chan struct{}{},
		usage: map[string]*llm.Usage{}, cost: map[string]float64{}, tools: map[string]ToolUse{}, states: map[string][]byte{},
	}
	for i := range o.Agents {
		a := &o.Agents[i]
		r.byID[a.ID], r.pos[a.ID] = a, i+1
		r.usage[a.ID] = &llm.Usage{}
	}
	start := o.Now()
	team := make([]event.AgentInfo, len(o.Agents))
	for i, a := range o.Agents {
		team[i] = event.AgentInfo{ID: a.ID, Backend: a.Backend, Model: a.ModelName, Simulated: a.Simulated}
	}
	r.publish(event.RunStarted{Question: question, Team: team})
	res := r.drive(ctx)
	r.wg.Wait()
	res.Duration = o.Now().Sub(start)
	res.Usage, res.Cost, res.Tools = map[string]llm.Usage{}, map[string]float64{}, map[string]ToolUse{}
	r.mu.Lock()
	r.ended = true
	for id, u := range r.usage {
		res.Usage[id] = *u
		res.Cost[id] = r.cost[id]
		res.Tools[id] = r.tools[id]
	}
	r.mu.Unlock()
	fin := event.RunFinished{Status: string(res.Status), Winner: res.Winner, Fallback: res.Fallback, GraceExpired: res.GraceExpired,
		Failures: res.Failures}
	if res.Err != nil {
		fin.Err = res.Err.Error()
	}
	r.publish(fin)
	return res
}

// runner drives one run: its loop goroutine owns the machine and every
// field below the line; turns and calls run in their own goroutines and
// talk to the loop only through inbox.
type runner struct {
	o        Options
	question string
	byID     map[string]*Agent
	pos      map[string]int // config position from 1, for the stable answer labels
	wg       sync.WaitGroup
	inbox    chan inboxMsg
	loopDone chan struct{} // closed when the loop has ended: sends give up

	// Owned by the loop goroutine.
	m         *coord.Machine
	attempt   int
	epoch     int
	feedback  string
	live      map[coord.TurnID]*liveTurn
	replies   map[coord.TurnID]chan coord.Verdict // turns waiting for a Reply
	call      context.CancelCauseFunc             // the presentation, evaluation or direct call in flight
	callUsage event.Usage                         // the usage of the call whose result is being stepped
	toolCalls []llm.ToolCall                      // client tool calls of the last presentation that succeeded
	timers    map[timerKey]*time.Timer            // the run's timers; round timers one per agent
	views     map[string]*viewGate                // views.go
	lastTask  map[string]chan struct{}            // each agent's latest task, closed when it ends (taskOrder)
	budgetHit bool
	personas  map[string]string // persona_generator's, by agent id, written before the run (personas.go)
	subtasks  map[string]string // decomposition mode's, by agent id, fixed before the run (decompose.go)

	mu     sync.Mutex // guards usage, cost, tools and states: tasks add to them as they go
	usage  map[string]*llm.Usage
	cost   map[string]float64
	tools  map[string]ToolUse
	states map[string][]byte // each agent's Done.State, for its next task
	ended  bool              // the result is built: charges are refused (charge.go)
}

// liveTurn is an in-flight turn as the loop sees it.
type liveTurn struct {
	agent  string
	cancel context.CancelCauseFunc
	inbox  *agent.Inbox // verdicts, and updates under the inject policy
}

// inboxMsg is how a turn, a call or a timer talks to the loop.
type inboxMsg struct {
	agent  string
	turn   coord.TurnID
	submit *submission     // a proposed action awaiting its Reply
	result *turnResult     // the turn ended
	call   *callResult     // the presentation, evaluation or direct call ended
	timer  coord.Timer     // a timer fired
	round  *coord.SetTimer // ... the round timer this one
}

// timerKey names a live timer: the run's deadline and grace, and one round
// timer per agent (a new one replaces the agent's last).
type timerKey struct {
	timer coord.Timer
	agent string
}

type submission struct {
	seen  int
	act   coord.Action
	reply chan coord.Verdict
}

// turnResult is how a turn ended: nil failure when its action was
// accepted or found stale.
type turnResult struct{ failure *coord.Failure }

// callResult is a finished presentation, evaluation or direct call: the
// input it makes for the machine, and what only the orchestrator keeps.
type callResult struct {
	in    coord.Input
	calls []llm.ToolCall
	usage llm.Usage
	cost  float64
}

var errSuperseded = errors.New("turn superseded by a newer answer")

// publish stamps an event with the attempt and epoch it belongs to and
// hands it to the broker. Every event of the loop goes through here.
func (r *runner) publish(e event.Event) {
	r.o.Events.Publish(event.At(e, cmp.Or(e.Head().Attempt, r.attempt), r.epoch))
}

// answerRefs names answers both ways for the events (answerRef).
func (r *runner) answerRefs(as []coord.Answer) []event.AnswerRef { return answerRefs(r.pos, as) }

// send delivers a message to the loop, unless the loop has ended.
func (r *runner) send(m inboxMsg) bool {
	select {
	case r.inbox <- m:
		return true
	case <-r.loopDone:
		return false
	}
}

// RunError is why a run did not complete: its Status, the machine's
// Reason, and the Failures that made every agent leave (as data, for a
// caller that wants to know which provider answered what). An interrupted
// run's error wraps the cause of the cancellation.
type RunError struct {
	Status   Status
	Reason   string
	Failures []coord.Failure
	cause    error
}

func (e *RunError) Error() string {
	// A plain cancellation (Ctrl+C, q, a client gone) says nothing the
	// status does not: "interrupted", not "interrupted: context canceled".
	// A cause given with the cancellation (a signal, a deadline) is told.
	if e.cause != nil && e.cause != context.Canceled {
		return e.Reason + ": " + e.cause.Error()
	}
	return e.Reason
}

func (e *RunError) Unwrap() error { return e.cause }

// result turns the machine's Finish into the run's Result.
func (r *runner) result(ctx context.Context, f coord.Finish) *Result {
	res := &Result{Status: f.Status, Final: f.Final, Winner: f.Winner, How: f.How, Fallback: f.Fallback,
		Deadline: f.Deadline, GraceExpired: f.GraceExpired, Tally: f.Tally, Answers: f.Answers, Attempts: f.Attempt,
		Failures: f.Failures}
	if f.Status == Completed && f.Fallback == "" {
		res.ToolCalls = r.toolCalls
	}
	if f.Status == Interrupted || f.Reason != "" {
		e := &RunError{Status: f.Status, Reason: f.Reason, Failures: f.Failures}
		if f.Status == Interrupted {
			e.cause = context.Cause(ctx)
		}
		res.Err = e
	}
	return res
}
