package agent

import (
	"context"
	"iter"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// Agent is one member of a team as the orchestrator drives it: it is given
// a Task as plain data and reports what happens as Outcomes, plain data
// too. Our LLM agent (LLM: a model and its own tool loop) is one
// implementation; a coding-agent CLI that runs its own tool loop, a
// scripted agent in tests, an agent hosted in a workflow activity or on
// another machine are others. Nothing above this package knows which one
// it drives.
//
// Run's sequence ends with exactly one Done. A coordination turn ends its
// work by yielding Propose and reading the coordinator's Verdict from
// inbox before it goes on: judging an action is a message, never a call
// into the coordinator, so the two sides can be a process or a network
// apart. Cancelling ctx ends the sequence soon (with a Done saying so); a
// consumer that stops ranging early cancels the work too.
type Agent interface {
	Run(ctx context.Context, task Task, inbox *Inbox) iter.Seq[Outcome]
}

// TaskKind says what a Task asks for.
type TaskKind int

const (
	// TaskCoordinate is a coordination turn: improve on the answers shown
	// (Propose a new_answer) or vote for one.
	TaskCoordinate TaskKind = iota
	// TaskPresent is the winner's final presentation: the final answer, as
	// text (Done.Text), or calls of the client's tools (Done.ToolCalls).
	TaskPresent
	// TaskDirect is a one-agent run's only call: answer the question plainly.
	TaskDirect
	// TaskEvaluate is the winner's post-evaluation of the final answer
	// (Done.Evaluation).
	TaskEvaluate
)

func (k TaskKind) String() string {
	return [...]string{"coordinate", "present", "direct", "evaluate"}[k]
}

// Task is what one agent is asked to do now, as plain data.
type Task struct {
	Kind TaskKind
	// Turn identifies a coordination turn; the verdicts in the inbox answer
	// its proposals.
	Turn coord.TurnID
	// System and User are the prompts as the orchestrator rendered them
	// (coordination rules, the question, the answers, feedback of an
	// earlier attempt, the conversation so far). An agent that brings its
	// own instructions may use the fields below instead.
	System, User string
	// Question is the user's question.
	Question string
	// Answers are the answers shown, under their anonymous labels; Epoch is
	// their answer set's epoch. TaskCoordinate: vote may name exactly these
	// labels. TaskPresent: the final answer set.
	Answers []coord.Answer
	Epoch   int
	// Final is the final answer under review (TaskEvaluate).
	Final string
	// ClientTools are an API client's own tools (TaskPresent, TaskDirect): calling
	// one ends the task, and the calls go back to the client.
	ClientTools []llm.ToolDef
	// Limits bound the task's tool use.
	Limits Limits
	// Checklist offers submit_checklist (checklist-gated voting) in a
	// coordination turn; its calls are judged like workflow actions.
	Checklist bool
	// Decomposition is a turn of decomposition mode: new_answer and stop
	// are offered instead of vote; Subtasks are every agent's subtask by
	// real id, for the updates shown mid-turn (decompose.go).
	Decomposition bool
	Subtasks      map[string]string
	// State is what the agent kept from its previous task of this run
	// (Done.State), as opaque data: an agent that must remember between
	// turns (a CLI's session id, a remote agent's conversation) keeps it
	// here rather than in memory, so any process can play its next task.
	State []byte
}

// Limits bound what one task may spend on tools. Zero values take the
// package defaults.
type Limits struct {
	MaxToolSteps int           // responses that ran tools, MaxToolSteps by default
	ToolTimeout  time.Duration // per tool call; 0: none of our own
}

// Message is what the orchestrator sends a running task: a Verdict on its
// proposal or an Update of the answer set (restart_policy: inject).
type Message interface{ message() }

// Verdict answers the task's last Propose.
type Verdict struct{ coord.Verdict }

// Update is a newer answer set for a task in flight: shown to the model
// before its next request.
type Update struct {
	Epoch   int
	Answers []coord.Answer
}

// WrapUp says that the task's round time is up (coord.WrapUp, per-round
// timeouts): Message is shown to the model before its next request, and
// after the hard limit (Hard) the task may only call vote or new_answer.
type WrapUp struct {
	Hard    bool
	Message string
}

func (Verdict) message() {}
func (Update) message()  {}
func (WrapUp) message()  {}

// Inbox carries messages to one running task. Post never blocks, so the
// orchestrator's loop cannot be held up by an agent. Verdicts queue in
// order; an Update replaces one not yet taken, since only the newest
// answer set matters.
type Inbox struct {
	mu       sync.Mutex
	verdicts []coord.Verdict
	update   *Update
	wrapUps  []WrapUp
	ready    chan struct{} // one token: "something arrived"
	wrapped  chan struct{} // one token: "a WrapUp arrived" (WrapUpPosted)
}

// NewInbox returns an empty inbox.
func NewInbox() *Inbox { return &Inbox{ready: make(chan struct{}, 1), wrapped: make(chan struct{}, 1)} }

// WrapUpPosted receives once a WrapUp has been posted since it last
// received (TakeWrapUps then has it): an agent whose model is not called
// by our loop (a CLI) learns of round time at once. nil for a nil inbox.
func (in *Inbox) WrapUpPosted() <-chan struct{} {
	if in == nil {
		return nil
	}
	return in.wrapped
}

// Post delivers m.
func (in *Inbox) Post(m Message) {
	in.mu.Lock()
	switch m := m.(type) {
	case Verdict:
		in.verdicts = append(in.verdicts, m.Verdict)
	case Update:
		in.update = &m
	case WrapUp:
		in.wrapUps = append(in.wrapUps, m)
		select {
		case in.wrapped <- struct{}{}:
		default:
		}
	}
	in.mu.Unlock()
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// Verdict waits for the verdict on the task's proposal. When ctx ends
// first, the verdict is Stale: the coordinator will not count an action
// it never answered.
func (in *Inbox) Verdict(ctx context.Context) coord.Verdict {
	for {
		in.mu.Lock()
		if len(in.verdicts) > 0 {
			v := in.verdicts[0]
			in.verdicts = in.verdicts[1:]
			in.mu.Unlock()
			return v
		}
		in.mu.Unlock()
		select {
		case <-in.ready:
		case <-ctx.Done():
			return coord.Verdict{Outcome: coord.Stale, Message: "coordination ended"}
		}
	}
}

// TakeUpdate returns the newest answer set posted since the last call, if
// any.
func (in *Inbox) TakeUpdate() (Update, bool) {
	if in == nil {
		return Update{}, false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.update == nil {
		return Update{}, false
	}
	u := *in.update
	in.update = nil
	return u, true
}

// TakeWrapUps returns the round-time messages posted since the last call,
// in order.
func (in *Inbox) TakeWrapUps() []WrapUp {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	w := in.wrapUps
	in.wrapUps = nil
	return w
}
