package orchestrator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
	r := &runner{o: o, question: question, byID: map[string]*Agent{}, usage: map[string]*llm.Usage{}, cost: map[string]float64{}}
	for i := range o.Agents {
		a := &o.Agents[i]
		r.byID[a.ID] = a
		r.usage[a.ID] = &llm.Usage{}
	}
	start := o.Now()
	r.deadline = start.Add(o.Timeout)
	team := make([]event.AgentInfo, len(o.Agents))
	for i, a := range o.Agents {
		team[i] = event.AgentInfo{ID: a.ID, Backend: a.Backend, Model: a.ModelName, Simulated: a.Simulated}
	}
	r.publish(event.RunStarted{Question: question, Team: team})
	var res *Result
	if o.Direct && len(o.Agents) == 1 {
		res = r.direct(ctx)
	} else {
		res = r.attempts(ctx)
	}
	r.wg.Wait()
	res.Duration = o.Now().Sub(start)
	res.Attempts = r.attempt
	res.Usage, res.Cost = map[string]llm.Usage{}, map[string]float64{}
	r.mu.Lock()
	for id, u := range r.usage {
		res.Usage[id] = *u
		res.Cost[id] = r.cost[id]
	}
	r.mu.Unlock()
	fin := event.RunFinished{Status: string(res.Status), Winner: res.Winner}
	if res.Err != nil {
		fin.Err = res.Err.Error()
	}
	r.publish(fin)
	return res
}

type runner struct {
	o        Options
	question string
	byID     map[string]*Agent
	deadline time.Time
	wg       sync.WaitGroup

	// Owned by the loop goroutine.
	m        *coord.Machine
	attempt  int
	epoch    int
	feedback string
	live     map[coord.TurnID]*liveTurn

	mu    sync.Mutex // guards usage and cost: turns add to them as they end
	usage map[string]*llm.Usage
	cost  map[string]float64
}

// liveTurn is an in-flight turn as the loop sees it.
type liveTurn struct {
	agent   string
	cancel  context.CancelCauseFunc
	updates chan coord.StartTurn // inject policy only
}

// inboxMsg is how a turn goroutine talks to the loop.
type inboxMsg struct {
	agent  string
	turn   coord.TurnID
	submit *submission   // a proposed action awaiting a verdict
	result *agent.Result // the turn ended
}

type submission struct {
	seen  int
	act   coord.Action
	reply chan coord.Verdict
}

var errSuperseded = errors.New("turn superseded by a newer answer")

func (r *runner) publish(e event.Event) {
	r.o.Events.Publish(event.At(e, cmp.Or(e.Head().Attempt, r.attempt), r.epoch))
}

// answerRef names an answer both ways for the events: the anonymous label
// coord gave it and the stable log label "agent<config position>.<revision>".
func (r *runner) answerRef(a coord.Answer) event.AnswerRef {
	pos := 0
	for i, ag := range r.o.Agents {
		if ag.ID == a.Agent {
			pos = i + 1
		}
	}
	return event.AnswerRef{Label: a.Label, Agent: a.Agent, Answer: event.AnswerLabel(pos, a.Rev)}
}

func (r *runner) answerRefs(as []coord.Answer) []event.AnswerRef {
	refs := make([]event.AnswerRef, len(as))
	for i, a := range as {
		refs[i] = r.answerRef(a)
	}
	return refs
}

// currentRef is the ref of agent id's current answer (zero if it has none).
func (r *runner) currentRef(id string) event.AnswerRef {
	for _, a := range r.m.Answers() {
		if a.Agent == id {
			return r.answerRef(a)
		}
	}
	return event.AnswerRef{}
}

// attempts runs orchestration attempts until one is accepted by
// post-evaluation (or there is nothing to evaluate).
func (r *runner) attempts(ctx context.Context) *Result {
	for {
		r.attempt++
		res, present := r.coordinate(ctx)
		if present == nil {
			return res
		}
		r.presentFinal(ctx, res, present)
		if ctx.Err() != nil {
			// Interrupted while presenting: the winner's stored answer is
			// kept (res.Final, and in the logs), but the run did not finish.
			res.Status, res.Err = Interrupted, fmt.Errorf("interrupted during the final presentation: %w", context.Cause(ctx))
			return res
		}
		if r.o.MaxRestarts == 0 || r.attempt > r.o.MaxRestarts || r.overBudget() != "" {
			return res
		}
		ev := r.postEvaluate(ctx, res)
		if !ev.Restart {
			return res
		}
		r.feedback = agent.FeedbackBlock(ev.Reason, ev.Instructions, res.Final)
		r.publish(event.RunRestarted{Agent: res.Winner, Reason: ev.Reason, Instructions: ev.Instructions})
	}
}
