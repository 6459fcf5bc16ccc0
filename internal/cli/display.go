package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
)

// display prints a run's progress. Plain mode writes one line per
// coordination step to stderr (the final answer alone goes to stdout, so
// pipes get just the answer); automation mode prints only the stable
// KEY: value lines on stdout.
type display struct {
	env        *Env
	automation bool
	who        map[string]string // agent id → "id [backend/model]"
	answers    map[string]int    // answers given per agent
}

func newDisplay(env *Env, automation bool, agents []orchestrator.Agent) *display {
	d := &display{env: env, automation: automation, who: map[string]string{}, answers: map[string]int{}}
	for _, a := range agents {
		sim := ""
		if a.Simulated {
			sim = ", simulated"
		}
		d.who[a.ID] = fmt.Sprintf("%s [%s/%s%s]", a.ID, a.Backend, a.ModelName, sim)
	}
	return d
}

func (d *display) logDir(dir string) {
	if d.automation {
		fmt.Fprintf(d.env.Stdout, "LOG_DIR: %s\n", dir)
		fmt.Fprintf(d.env.Stdout, "STATUS: %s\n", filepath.Join(dir, "status.json"))
	} else {
		fmt.Fprintf(d.env.Stderr, "logs: %s\n", dir)
	}
}

func (d *display) run(sub *event.Subscription) {
	for {
		e, ok := sub.Next(nil)
		if !ok {
			return
		}
		if !d.automation {
			d.line(d.env.Stderr, e)
		}
	}
}

func (d *display) line(w io.Writer, e event.Event) {
	who := d.who[e.Agent]
	switch e.Type {
	case event.RunStarted:
		var team []string
		for _, id := range e.Agents {
			team = append(team, d.who[id])
		}
		noun := "agents"
		if len(e.Agents) == 1 {
			noun = "agent"
		}
		fmt.Fprintf(w, "massgen: %d %s: %s\n", len(e.Agents), noun, strings.Join(team, ", "))
	case event.TurnStarted:
		fmt.Fprintf(w, "  … %s working (sees %d answers)\n", who, len(e.Labels))
	case event.AnswerAccepted:
		d.answers[e.Agent]++
		fmt.Fprintf(w, "  ✓ %s gave answer #%d: %s\n", e.Agent, d.answers[e.Agent], preview(e.Text, 70))
	case event.VoteAccepted:
		fmt.Fprintf(w, "  ✓ %s voted for %s (shown as %s): %s\n", e.Agent, e.Target, e.TargetLabel, preview(e.Reason, 60))
	case event.ActionRejected:
		fmt.Fprintf(w, "  ✗ %s: rejected: %s\n", e.Agent, preview(e.Reason, 90))
	case event.TurnRestarted:
		fmt.Fprintf(w, "  ↻ %s restarted: %s\n", e.Agent, e.Reason)
	case event.TurnFailed:
		fmt.Fprintf(w, "  ! %s turn failed: %s\n", who, e.Err)
	case event.AgentFailed:
		fmt.Fprintf(w, "  ✗ %s left the run after %s: %s\n", who, e.Reason, e.Err)
	case event.Timeout:
		if e.Agent == "" {
			fmt.Fprintf(w, "  ⏱ %s\n", e.Reason)
		} else {
			fmt.Fprintf(w, "  ⏱ %s: %s\n", who, e.Err)
		}
	case event.WinnerSelected:
		fmt.Fprintf(w, "  ★ winner: %s (%s; votes %s)\n", who, e.Reason, tally(e.Votes))
	case event.FinalStarted:
		fmt.Fprintf(w, "  … %s is writing the final answer\n", who)
	case event.FinalAnswer:
		if e.Reason != "presentation" {
			fmt.Fprintf(w, "  note: %s\n", e.Reason)
		}
	case event.PostEvaluation:
		fmt.Fprintf(w, "  post-evaluation by %s: %s %s\n", e.Agent, e.Text, e.Reason)
	case event.RunRestarted:
		fmt.Fprintf(w, "  ↻ orchestration restarted: %s\n", e.Reason)
	case event.RunFinished:
		fmt.Fprintf(w, "massgen: %s\n", e.Status) // the error itself is printed once, by Run
	}
}

func tally(v map[string]int) string {
	if len(v) == 0 {
		return "none"
	}
	var parts []string
	for id, n := range v {
		parts = append(parts, fmt.Sprintf("%s=%d", id, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
