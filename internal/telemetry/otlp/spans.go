package otlp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// The span model (GenAI semantic conventions where they apply):
//
//	invoke_agent massgen                  the run (root)
//	├── invoke_agent <agent>              a coordination turn: turn_started → turn_ended,
//	│   │                                 failed by the turn_failed / timeout that follows it;
//	│   │                                 new_answer, vote_cast, action_rejected, restart are its events
//	│   ├── chat <model>                  a request to the model (model_called: its end,
//	│   │                                 duration, usage and failure)
//	│   └── execute_tool <tool>           a tool call (tool_called: its end and duration)
//	├── invoke_agent <winner>             the final presentation: final_started → final_answer
//	└── invoke_agent <winner>             post-evaluation: final_answer → post_evaluation
//
// massgen.turn.kind tells the three kinds of agent span apart. Each model
// request is a chat span under its turn (or presentation) with that
// request's usage; the metrics count usage once, per turn.

// Attribute keys.
const (
	attrOperation    = "gen_ai.operation.name"
	attrProvider     = "gen_ai.provider.name"
	attrSystem       = "gen_ai.system" // the older name of gen_ai.provider.name
	attrModel        = "gen_ai.request.model"
	attrAgentID      = "gen_ai.agent.id"
	attrAgentName    = "gen_ai.agent.name"
	attrInputTokens  = "gen_ai.usage.input_tokens"
	attrOutputTokens = "gen_ai.usage.output_tokens"
	attrToolName     = "gen_ai.tool.name"
	attrErrorType    = "error.type"
	attrHTTPStatus   = "http.response.status_code"

	attrCost        = "massgen.cost_usd"
	attrTurnKind    = "massgen.turn.kind" // coordination, presentation, direct, post_evaluation
	attrOutcome     = "massgen.turn.outcome"
	attrAttempt     = "massgen.attempt"
	attrEpoch       = "massgen.epoch"
	attrToolRounds  = "massgen.tool_rounds"
	attrShown       = "massgen.answers_shown"
	attrLabel       = "massgen.answer.label"
	attrAnonLabel   = "massgen.answer.anon_label"
	attrVoteTarget  = "massgen.vote.target"
	attrVoteLabel   = "massgen.vote.target_label"
	attrVoteAnswer  = "massgen.vote.target_answer"
	attrReason      = "massgen.reason"
	attrStatus      = "massgen.status"
	attrWinner      = "massgen.winner"
	attrWinnerLabel = "massgen.winner.label"
	attrAgents      = "massgen.agents"
	attrSimulated   = "massgen.simulated"
	attrRetryable   = "massgen.failure.retryable"
	attrBackend     = "massgen.backend"
)

// turn is an agent span that is open, or ended and awaiting the verdict
// on it (a failed turn's turn_failed follows its turn_ended).
type turn struct {
	span           trace.Span
	agent          string
	kind           string
	attempt, epoch int
	start, end     time.Time
	usage          event.Usage
	rounds         int
	errType        string
}

// deriver turns one run's events into spans and metrics. One goroutine
// calls it, in event order.
type deriver struct {
	tracer  trace.Tracer
	inst    *instruments
	content bool

	team    map[string]event.AgentInfo
	parent  context.Context // the caller's trace (parentOf), or none
	run     trace.Span
	runCtx  context.Context
	usage   event.Usage
	open    map[string][]*turn // per agent, oldest first
	pending map[string]*turn   // turn_ended seen, verdict not yet
	final   *turn              // the presentation, while it runs
	finalAt time.Time          // when the last final answer came
	ended   bool
}

func newDeriver(t trace.Tracer, inst *instruments, content bool) *deriver {
	return &deriver{tracer: t, inst: inst, content: content, parent: context.Background(), team: map[string]event.AgentInfo{},
		open: map[string][]*turn{}, pending: map[string]*turn{}}
}

func (d *deriver) handle(e event.Event) {
	if d.ended {
		return
	}
	h := e.Head()
	if _, ok := e.(event.RunStarted); !ok && d.run == nil {
		d.startRun(h.Time, nil, "")
	}
	switch e := e.(type) {
	case event.RunStarted:
		d.startRun(h.Time, e.Team, e.Question)
	case event.TurnStarted:
		d.settle(e.Agent, nil)
		t := d.startTurn(e.Agent, "coordination", h)
		t.span.SetAttributes(attribute.Int(attrShown, len(e.Shown)))
		if e.Reason != "" {
			t.span.SetAttributes(attribute.String(attrReason, e.Reason))
		}
		d.open[e.Agent] = append(d.open[e.Agent], t)
	case event.ToolCalled:
		d.tool(e)
	case event.ModelCalled:
		d.modelCall(e)
	case event.AnswerAccepted:
		if t := d.current(e.Agent); t != nil {
			t.span.SetAttributes(attribute.String(attrOutcome, "answer"), attribute.String(attrLabel, e.Label))
			attrs := []attribute.KeyValue{attribute.String(attrLabel, e.Label), attribute.String(attrAnonLabel, e.AnonLabel)}
			if d.content {
				attrs = append(attrs, attribute.String("massgen.answer.text", e.Content))
			}
			t.span.AddEvent("massgen.new_answer", trace.WithTimestamp(h.Time), trace.WithAttributes(attrs...))
		}
	case event.VoteAccepted:
		if t := d.current(e.Agent); t != nil {
			t.span.SetAttributes(attribute.String(attrOutcome, "vote"), attribute.String(attrVoteTarget, e.Target),
				attribute.String(attrVoteAnswer, e.TargetAnswer))
			attrs := []attribute.KeyValue{attribute.String(attrVoteTarget, e.Target), attribute.String(attrVoteLabel, e.TargetLabel),
				attribute.String(attrVoteAnswer, e.TargetAnswer)}
			if d.content {
				attrs = append(attrs, attribute.String(attrReason, e.Reason))
			}
			t.span.AddEvent("massgen.vote_cast", trace.WithTimestamp(h.Time), trace.WithAttributes(attrs...))
		}
	case event.ActionRejected:
		if t := d.current(e.Agent); t != nil {
			t.span.AddEvent("massgen.action_rejected", trace.WithTimestamp(h.Time),
				trace.WithAttributes(attribute.String(attrReason, e.Reason)))
		}
	case event.TurnRestarted:
		if t := d.current(e.Agent); t != nil {
			t.span.SetAttributes(attribute.String(attrOutcome, "restarted"))
			t.span.AddEvent("massgen.restart", trace.WithTimestamp(h.Time),
				trace.WithAttributes(attribute.String("massgen.restart.cause", e.Cause), attribute.String(attrReason, e.Reason)))
		}
	case event.TurnEnded:
		d.turnEnded(e)
	case event.TurnFailed:
		d.failed(e.Agent, e.Err, e.Failure, "failed", h.Time)
	case event.Timeout:
		if e.Agent != "" {
			d.failed(e.Agent, e.Err, e.Failure, "timeout", h.Time)
			break
		}
		d.run.AddEvent("massgen.timeout", trace.WithTimestamp(h.Time), trace.WithAttributes(attribute.String(attrReason, e.Reason)))
	case event.AgentFailed:
		attrs := []attribute.KeyValue{attribute.String(attrAgentID, e.Agent), attribute.String(attrReason, e.Reason)}
		if e.Failure != nil {
			attrs = append(attrs, attribute.String(attrErrorType, string(e.Failure.Kind)))
		}
		d.run.AddEvent("massgen.agent_failed", trace.WithTimestamp(h.Time), trace.WithAttributes(attrs...))
	case event.BudgetExceeded:
		d.run.AddEvent("massgen.budget_exceeded", trace.WithTimestamp(h.Time), trace.WithAttributes(attribute.String(attrReason, e.Reason)))
	case event.WinnerSelected:
		d.run.SetAttributes(attribute.String(attrWinner, e.Agent), attribute.String(attrWinnerLabel, e.Label))
		attrs := []attribute.KeyValue{attribute.String(attrWinner, e.Agent), attribute.String(attrWinnerLabel, e.Label),
			attribute.String(attrReason, e.How)}
		for id, n := range e.Votes {
			attrs = append(attrs, attribute.Int("massgen.votes."+id, n))
		}
		d.run.AddEvent("massgen.winner_selected", trace.WithTimestamp(h.Time), trace.WithAttributes(attrs...))
	case event.FinalStarted:
		d.settle(e.Agent, nil)
		d.endFinal(h.Time, event.Usage{}, "superseded")
		d.final = d.startTurn(e.Agent, cmpOr(e.Mode, "presentation"), h)
	case event.FinalAnswer:
		d.usage = d.usage.Add(e.Usage)
		if d.content {
			d.run.SetAttributes(attribute.String("massgen.final_answer", e.Text))
		}
		d.endFinal(h.Time, e.Usage, e.Reason)
		d.finalAt = h.Time
	case event.PostEvaluation:
		d.usage = d.usage.Add(e.Usage)
		start := d.finalAt
		if start.IsZero() || start.After(h.Time) {
			start = h.Time
		}
		t := d.startTurn(e.Agent, "post_evaluation", event.Header{Time: start, Attempt: h.Attempt, Epoch: h.Epoch})
		t.span.SetAttributes(attribute.String("massgen.post_evaluation.verdict", e.Verdict), attribute.String(attrOutcome, e.Verdict))
		if d.content && e.Reason != "" {
			t.span.SetAttributes(attribute.String(attrReason, e.Reason))
		}
		t.usage, t.end = e.Usage, h.Time
		d.endTurn(t)
	case event.RunRestarted:
		d.run.AddEvent("massgen.orchestration_restart", trace.WithTimestamp(h.Time),
			trace.WithAttributes(attribute.String(attrReason, e.Reason), attribute.Int(attrAttempt, h.Attempt+1)))
	case event.RunFinished:
		d.finish(e, h.Time)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (d *deriver) startRun(at time.Time, team []event.AgentInfo, question string) {
	if d.run != nil {
		return
	}
	ids := make([]string, 0, len(team))
	for _, a := range team {
		d.team[a.ID] = a
		ids = append(ids, a.ID)
	}
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "invoke_agent"), attribute.String(attrAgentName, "massgen"),
		attribute.StringSlice(attrAgents, ids)}
	if d.content && question != "" {
		attrs = append(attrs, attribute.String("massgen.question", question))
	}
	d.runCtx, d.run = d.tracer.Start(d.parent, "invoke_agent massgen", trace.WithTimestamp(at),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// agentAttrs are the GenAI attributes of agent id's calls.
func (d *deriver) agentAttrs(id string) []attribute.KeyValue {
	a := d.team[id]
	p := provider(a.Backend)
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "invoke_agent")}
	if p != "" {
		attrs = append(attrs, attribute.String(attrProvider, p), attribute.String(attrSystem, p))
	}
	if a.Model != "" {
		attrs = append(attrs, attribute.String(attrModel, a.Model))
	}
	return attrs
}

func (d *deriver) startTurn(agent, kind string, h event.Header) *turn {
	attrs := append(d.agentAttrs(agent), attribute.String(attrAgentID, agent), attribute.String(attrAgentName, agent),
		attribute.String(attrTurnKind, kind), attribute.Int(attrAttempt, h.Attempt), attribute.Int(attrEpoch, h.Epoch))
	if a := d.team[agent]; a.Backend != "" {
		attrs = append(attrs, attribute.String(attrBackend, a.Backend))
		if a.Simulated {
			attrs = append(attrs, attribute.Bool(attrSimulated, true))
		}
	}
	_, span := d.tracer.Start(d.runCtx, "invoke_agent "+agent, trace.WithTimestamp(h.Time),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return &turn{span: span, agent: agent, kind: kind, attempt: h.Attempt, epoch: h.Epoch, start: h.Time}
}

// current is agent's turn that events about its actions belong to: its
// newest open turn, else its presentation.
func (d *deriver) current(agent string) *turn {
	if ts := d.open[agent]; len(ts) > 0 {
		return ts[len(ts)-1]
	}
	if d.final != nil && d.final.agent == agent {
		return d.final
	}
	return nil
}

// parentOf is the span a call of agent's belongs under: its turn of the
// event's attempt and epoch, else its latest open one (or the
// presentation).
func (d *deriver) parentOf(agent string, h event.Header) context.Context {
	parent := d.current(agent)
	for _, t := range d.open[agent] {
		if t.attempt == h.Attempt && t.epoch == h.Epoch {
			parent = t
			break
		}
	}
	if parent == nil {
		return d.runCtx
	}
	return trace.ContextWithSpan(d.runCtx, parent.span)
}

// modelCall makes the span of one request to the agent's model: "chat
// <model>", a client span with that request's usage, in error when it
// failed.
func (d *deriver) modelCall(e event.ModelCalled) {
	h := e.Head()
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "chat"), attribute.String(attrModel, e.Model),
		attribute.String(attrAgentID, e.Agent),
		attribute.Int64(attrInputTokens, e.Usage.InputTokens), attribute.Int64(attrOutputTokens, e.Usage.OutputTokens)}
	if p := provider(d.team[e.Agent].Backend); p != "" {
		attrs = append(attrs, attribute.String(attrProvider, p), attribute.String(attrSystem, p))
	}
	if e.Usage.CostUSD > 0 {
		attrs = append(attrs, attribute.Float64(attrCost, e.Usage.CostUSD))
	}
	_, span := d.tracer.Start(d.parentOf(e.Agent, h), "chat "+e.Model, trace.WithTimestamp(h.Time.Add(-e.Duration)),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	if f := e.Failure; f != nil && f.Kind != coord.FailCancelled {
		span.SetAttributes(attribute.String(attrErrorType, string(f.Kind)))
		if f.Status != 0 {
			span.SetAttributes(attribute.Int(attrHTTPStatus, f.Status))
		}
		span.SetStatus(codes.Error, firstLine(f.Message))
	}
	span.End(trace.WithTimestamp(h.Time))
}

// tool makes the span of one tool call, under the turn that made it (the
// event carries that turn's attempt and epoch).
func (d *deriver) tool(e event.ToolCalled) {
	h := e.Head()
	parent := d.current(e.Agent)
	for _, t := range d.open[e.Agent] {
		if t.attempt == h.Attempt && t.epoch == h.Epoch {
			parent = t
			break
		}
	}
	ctx := d.runCtx
	if parent != nil {
		ctx = trace.ContextWithSpan(ctx, parent.span)
	}
	attrs := append(d.agentAttrs(e.Agent), attribute.String(attrOperation, "execute_tool"), attribute.String(attrToolName, e.Tool),
		attribute.String(attrAgentID, e.Agent))
	_, span := d.tracer.Start(ctx, "execute_tool "+e.Tool, trace.WithTimestamp(h.Time.Add(-e.Duration)),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if e.IsError {
		span.SetAttributes(attribute.String(attrErrorType, "tool_error"))
		span.SetStatus(codes.Error, firstLine(e.Result))
	}
	span.End(trace.WithTimestamp(h.Time))
}

// turnEnded closes the accounting of agent's turn that started in the
// event's attempt and epoch (or its oldest open one); the span ends when
// the verdict is known: at the next event about the agent.
func (d *deriver) turnEnded(e event.TurnEnded) {
	h := e.Head()
	d.usage = d.usage.Add(e.Usage)
	ts := d.open[e.Agent]
	i := -1
	for j, t := range ts {
		if t.attempt == h.Attempt && t.epoch == h.Epoch {
			i = j
			break
		}
	}
	if i < 0 && len(ts) > 0 {
		i = 0
	}
	if i < 0 {
		// A turn this subscriber did not see start: count it all the same.
		d.inst.call(d.metricAttrs(e.Agent, "coordination"), e.InputTokens, e.OutputTokens, e.CostUSD, 0, "")
		return
	}
	t := ts[i]
	d.open[e.Agent] = append(ts[:i:i], ts[i+1:]...)
	t.usage, t.rounds, t.end = e.Usage, e.ToolRounds, h.Time
	d.settle(e.Agent, nil)
	d.pending[e.Agent] = t
}

// failed marks agent's last turn failed: the one awaiting its verdict
// (which then ends), else its newest open one.
func (d *deriver) failed(agent, msg string, f *coord.Failure, outcome string, at time.Time) {
	if t := d.pending[agent]; t != nil {
		t.span.SetAttributes(attribute.String(attrOutcome, outcome))
		d.settle(agent, f)
		return
	}
	if t := d.current(agent); t != nil {
		t.span.SetAttributes(attribute.String(attrOutcome, outcome))
		fail(t, f, msg)
		return
	}
	attrs := []attribute.KeyValue{attribute.String(attrAgentID, agent)}
	if f != nil {
		attrs = append(attrs, attribute.String(attrErrorType, string(f.Kind)))
	}
	d.run.AddEvent("massgen.turn_failed", trace.WithTimestamp(at), trace.WithAttributes(attrs...))
}

// fail sets t's error from failure f (message msg when f is nil). A
// cancelled turn is not an error.
func fail(t *turn, f *coord.Failure, msg string) {
	kind := "other"
	if f != nil {
		kind = string(f.Kind)
		msg = f.Message
	}
	if kind == string(coord.FailCancelled) {
		t.span.SetAttributes(attribute.String(attrOutcome, "cancelled"))
		return
	}
	t.errType = kind
	attrs := []attribute.KeyValue{attribute.String(attrErrorType, kind), attribute.String("exception.type", kind),
		attribute.String("exception.message", msg)}
	t.span.SetAttributes(attribute.String(attrErrorType, kind))
	if f != nil {
		if f.Status != 0 {
			t.span.SetAttributes(attribute.Int(attrHTTPStatus, f.Status))
		}
		t.span.SetAttributes(attribute.Bool(attrRetryable, f.Retryable))
	}
	t.span.AddEvent("exception", trace.WithAttributes(attrs...))
	t.span.SetStatus(codes.Error, msg)
}

// settle ends agent's turn awaiting its verdict, failed by f (nil: it
// did not fail).
func (d *deriver) settle(agent string, f *coord.Failure) {
	t := d.pending[agent]
	if t == nil {
		return
	}
	delete(d.pending, agent)
	if f != nil {
		fail(t, f, "")
	}
	d.endTurn(t)
}

// endTurn ends t at t.end with its usage, and records its metrics.
func (d *deriver) endTurn(t *turn) {
	t.span.SetAttributes(attribute.Int64(attrInputTokens, t.usage.InputTokens), attribute.Int64(attrOutputTokens, t.usage.OutputTokens),
		attribute.Float64(attrCost, t.usage.CostUSD))
	if t.kind == "coordination" {
		t.span.SetAttributes(attribute.Int(attrToolRounds, t.rounds))
	}
	d.inst.call(d.metricAttrs(t.agent, t.kind), t.usage.InputTokens, t.usage.OutputTokens, t.usage.CostUSD,
		max(t.end.Sub(t.start), 0).Seconds(), t.errType)
	t.span.End(trace.WithTimestamp(t.end))
}

func (d *deriver) metricAttrs(agent, kind string) []attribute.KeyValue {
	return append(d.agentAttrs(agent), attribute.String(attrTurnKind, kind))
}

// endFinal ends the presentation, if one runs.
func (d *deriver) endFinal(at time.Time, u event.Usage, reason string) {
	t := d.final
	if t == nil {
		return
	}
	d.final = nil
	t.usage, t.end = u, at
	t.span.SetAttributes(attribute.String(attrReason, reason))
	d.endTurn(t)
}

// finish ends the run at run_finished: what is still open ends with it.
func (d *deriver) finish(e event.RunFinished, at time.Time) {
	d.endAll(at, "")
	attrs := []attribute.KeyValue{attribute.String(attrStatus, e.Status), attribute.Int64(attrInputTokens, d.usage.InputTokens),
		attribute.Int64(attrOutputTokens, d.usage.OutputTokens), attribute.Float64(attrCost, d.usage.CostUSD)}
	if e.Winner != "" {
		attrs = append(attrs, attribute.String(attrWinner, e.Winner))
	}
	if e.Fallback != "" {
		attrs = append(attrs, attribute.String("massgen.fallback", e.Fallback))
	}
	d.run.SetAttributes(attrs...)
	if e.Status != "completed" {
		d.run.SetAttributes(attribute.String(attrErrorType, e.Status))
		d.run.SetStatus(codes.Error, cmpOr(e.Err, "run "+e.Status))
	}
	d.inst.runs.Add(context.Background(), 1, metricAttrsOf(attribute.String(attrStatus, e.Status)))
	d.run.End(trace.WithTimestamp(at))
	d.ended = true
}

// close is called when the subscription ends: cut is why it was cut
// (nil: the broker closed). Whatever is still open ends now, in error if
// the events stopped early.
func (d *deriver) close(cut error, now time.Time) {
	if d.ended || d.run == nil {
		return
	}
	msg := "the run's events ended without run_finished"
	if cut != nil {
		msg = fmt.Sprintf("telemetry lost the run's events: %v", cut)
	}
	d.endAll(now, msg)
	d.run.SetAttributes(attribute.String(attrErrorType, "massgen.telemetry_incomplete"))
	d.run.SetStatus(codes.Error, msg)
	d.run.End(trace.WithTimestamp(now))
	d.ended = true
}

// endAll ends every agent span still open at at; with msg, in error.
func (d *deriver) endAll(at time.Time, msg string) {
	for agent := range d.pending {
		d.settle(agent, nil)
	}
	end := func(t *turn) {
		if msg != "" {
			t.errType = "massgen.telemetry_incomplete"
			t.span.SetAttributes(attribute.String(attrErrorType, t.errType))
			t.span.SetStatus(codes.Error, msg)
		} else {
			t.span.SetAttributes(attribute.String(attrOutcome, "unfinished"))
		}
		t.end = at
		d.endTurn(t)
	}
	for agent, ts := range d.open {
		for _, t := range ts {
			end(t)
		}
		delete(d.open, agent)
	}
	if d.final != nil {
		end(d.final)
		d.final = nil
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// provider is gen_ai.provider.name for a backend type: the conventions'
// well-known values where there is one, else the backend type.
func provider(backend string) string {
	switch backend {
	case "claude", "anthropic":
		return "anthropic"
	case "gemini":
		return "gcp.gemini"
	case "grok", "xai":
		return "x_ai"
	case "azure_openai":
		return "azure.ai.openai"
	case "openai":
		return "openai"
	}
	return backend
}
