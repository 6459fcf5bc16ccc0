package app

import (
	"time"

	"github.com/massgen/massgen/internal/event"
)

// Analysis is where a run's time and tokens went, from its events.
type Analysis struct {
	Question string
	Status   string // "" when the run has no run_finished event (it died)
	Winner   string
	Duration time.Duration
	Answers  int
	Votes    int
	Agents   []AgentWork // config order
	Phases   []PhaseWork
	Total    event.Usage
	// Wasted is what the turns that were cancelled by a newer answer, or
	// failed, or timed out, spent: work no answer or vote came from.
	Wasted event.Usage
}

// AgentWork is one agent's share of a run.
type AgentWork struct {
	Agent     string
	Turns     int // coordination turns started
	Restarted int // of them, cancelled by a newer answer
	Failed    int // of them, failed or timed out
	Answers   int
	Votes     int
	ToolCalls int
	Busy      time.Duration // time inside coordination turns
	Usage     event.Usage   // everything, presentation included
	Wasted    event.Usage
	WastedFor time.Duration // time inside the wasted turns
}

// PhaseWork is one phase of the run: coordination (the first event to the
// winner), presentation (the final answer), post-evaluation.
type PhaseWork struct {
	Name     string
	Duration time.Duration
	Usage    event.Usage
}

// Analyze sums a run's events up.
func Analyze(recs []event.Record) Analysis {
	var a Analysis
	idx := map[string]int{}
	agent := func(id string) *AgentWork {
		i, ok := idx[id]
		if !ok {
			i = len(a.Agents)
			idx[id] = i
			a.Agents = append(a.Agents, AgentWork{Agent: id})
		}
		return &a.Agents[i]
	}
	type open struct {
		start  time.Time
		wasted bool
	}
	turns := map[string]*open{}
	phases := []PhaseWork{{Name: "coordination"}, {Name: "presentation"}, {Name: "post-evaluation"}}
	var start, winnerAt, finalStart, end time.Time
	use := func(r event.Record) event.Usage {
		return event.Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CostUSD: r.CostUSD}
	}
	for _, r := range recs {
		if end.Before(r.Time) {
			end = r.Time
		}
		switch r.Type {
		case event.TypeRunStarted:
			a.Question, start = r.Text, r.Time
			for _, id := range r.Agents {
				agent(id)
			}
		case event.TypeTurnStarted:
			ag := agent(r.Agent)
			ag.Turns++
			turns[r.Agent] = &open{start: r.Time}
		case event.TypeTurnRestarted:
			agent(r.Agent).Restarted++
			if t := turns[r.Agent]; t != nil {
				t.wasted = true
			}
		case event.TypeTurnFailed, event.TypeTimeout:
			if r.Agent == "" {
				break
			}
			agent(r.Agent).Failed++
			if t := turns[r.Agent]; t != nil {
				t.wasted = true
			}
		case event.TypeToolCalled:
			agent(r.Agent).ToolCalls++
		case event.TypeAnswerAccepted:
			agent(r.Agent).Answers++
			a.Answers++
		case event.TypeVoteAccepted:
			agent(r.Agent).Votes++
			a.Votes++
		case event.TypeTurnEnded:
			ag, u := agent(r.Agent), use(r)
			ag.Usage = ag.Usage.Add(u)
			phases[0].Usage = phases[0].Usage.Add(u)
			if t := turns[r.Agent]; t != nil {
				d := r.Time.Sub(t.start)
				ag.Busy += d
				if t.wasted {
					ag.Wasted = ag.Wasted.Add(u)
					ag.WastedFor += d
					a.Wasted = a.Wasted.Add(u)
				}
				delete(turns, r.Agent)
			}
		case event.TypeWinnerSelected:
			winnerAt, a.Winner = r.Time, r.Agent
		case event.TypeFinalStarted:
			finalStart = r.Time
		case event.TypeFinalAnswer:
			u := use(r)
			if r.Agent != "" {
				ag := agent(r.Agent)
				ag.Usage = ag.Usage.Add(u)
			}
			phases[1].Usage = phases[1].Usage.Add(u)
			if !finalStart.IsZero() {
				phases[1].Duration += r.Time.Sub(finalStart)
			}
		case event.TypePostEvaluation:
			u := use(r)
			if r.Agent != "" {
				ag := agent(r.Agent)
				ag.Usage = ag.Usage.Add(u)
			}
			phases[2].Usage = phases[2].Usage.Add(u)
		case event.TypeRunFinished:
			a.Status = r.Status
			if r.Agent != "" {
				a.Winner = r.Agent
			}
		}
	}
	if !start.IsZero() {
		a.Duration = end.Sub(start)
		coordEnd := winnerAt
		if coordEnd.IsZero() {
			coordEnd = end
		}
		phases[0].Duration = coordEnd.Sub(start)
	}
	for _, p := range phases {
		a.Total = a.Total.Add(p.Usage)
	}
	a.Phases = phases
	return a
}
