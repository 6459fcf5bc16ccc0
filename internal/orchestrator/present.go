package orchestrator

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
)

// presentFinal has the winner write the final answer, falling back to its
// stored answer when it cannot, or makes its stored answer the final
// answer when a presentation would add nothing (see skipPresentation).
func (r *runner) presentFinal(ctx context.Context, res *Result, p *coord.Present) {
	a := r.byID[p.Winner]
	res.Final = p.Answer.Content
	if why := r.skipPresentation(); why != "" {
		r.publish(event.FinalAnswer{Agent: p.Winner, Text: res.Final, Reason: why})
		return
	}
	if r.m.Status(p.Winner) == coord.Failed {
		res.Fallback = "the winner had failed, so its stored answer is the final answer"
		r.publish(event.FinalAnswer{Agent: p.Winner, Text: res.Final, Reason: res.Fallback})
		return
	}
	pctx, cancel := r.presentationContext(ctx)
	defer cancel()
	system := agent.PresentationSystem(a.SystemMessage)
	user := agent.HistoryBlock(r.o.History) + agent.PresentationUser(r.question, p.Winner, voteSummary(p.Winner, p.Tally, p.How, p.Votes), p.Answers)
	r.publish(event.FinalStarted{Agent: p.Winner, Prompt: system + "\n\n" + user, Mode: "presentation"})
	text, calls, usage, err := agent.PresentWithTools(pctx, a.Model, llm.Request{Model: a.ModelName, Params: a.Params}, system, user,
		r.o.ClientTools, deltas{b: r.o.Events, agent: p.Winner, final: true, attempt: r.attempt, epoch: r.epoch})
	if err == nil {
		res.ToolCalls = calls
	}
	cost := r.addUsage(p.Winner, usage)
	switch {
	case err != nil:
		res.Fallback = fmt.Sprintf("the presentation failed (%v), so the winner's stored answer is the final answer", err)
	case text == "" && len(calls) > 0:
		res.Final = "" // the answer is the tool calls; the client runs them
	case text == "":
		res.Fallback = "the presentation was empty, so the winner's stored answer is the final answer"
	default:
		res.Final = text
	}
	r.publish(event.FinalAnswer{Agent: p.Winner, Text: res.Final, Reason: cmp.Or(res.Fallback, "presentation"),
		Usage: event.Usage{InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens, CostUSD: cost}})
}

// skipPresentation says why the winner's answer is final as it stands, or
// "" when the winner presents. Client tools need the presentation: it is
// the only call that offers them.
func (r *runner) skipPresentation() string {
	if len(r.o.ClientTools) > 0 {
		return ""
	}
	switch {
	case r.o.Presentation == PresentNever:
		return "the winning answer is the final answer (final presentation disabled)"
	case r.o.Presentation == PresentAuto && len(r.o.Agents) == 1:
		return "the winning answer is the final answer (a single agent has no other answers to combine)"
	}
	return ""
}

// presentationContext bounds the presentation by the run deadline, but
// never by less than the grace period: a run that reached consensus just
// before its deadline still gets to present.
func (r *runner) presentationContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := r.deadline.Sub(r.o.Now())
	if d < r.o.PresentationGrace {
		d = r.o.PresentationGrace
	}
	return context.WithTimeout(ctx, d)
}

func (r *runner) postEvaluate(ctx context.Context, res *Result) agent.Evaluation {
	a := r.byID[res.Winner]
	pctx, cancel := r.presentationContext(ctx)
	defer cancel()
	ev := agent.PostEvaluate(pctx, a.Model, llm.Request{Model: a.ModelName, Params: a.Params},
		agent.PresentationSystem(a.SystemMessage), agent.PostEvalUser(r.question, res.Final), nil)
	cost := r.addUsage(res.Winner, ev.Usage)
	verdict := "submit"
	if ev.Restart {
		verdict = "restart"
	}
	r.publish(event.PostEvaluation{Agent: res.Winner, Verdict: verdict, Reason: ev.Reason,
		Usage: event.Usage{InputTokens: ev.Usage.InputTokens, OutputTokens: ev.Usage.OutputTokens, CostUSD: cost}})
	return ev
}

// voteSummary is the sentence the presenter reads about its votes.
func voteSummary(winner string, tally map[string]int, how string, votes []coord.Vote) string {
	var reasons []string
	for _, v := range votes {
		if v.Target == winner && v.Reason != "" {
			reasons = append(reasons, v.Reason)
		}
	}
	ids := make([]string, 0, len(tally))
	for id := range tally {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("%s: %d", id, tally[id]))
	}
	s := fmt.Sprintf("You received %d vote(s) (%s). Winner chosen by %s.", tally[winner], strings.Join(parts, ", "), how)
	if len(reasons) > 0 {
		s += " Reasons: " + strings.Join(reasons, "; ")
	}
	return s
}
