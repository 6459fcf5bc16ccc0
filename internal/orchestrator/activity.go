package orchestrator

import (
	"context"
	"time"

	"github.com/massgen/massgen/internal/llm"
)

// Activities follow the bytes of each agent's model requests (turns,
// presentation, evaluation), for status displays: how long the request an
// agent has in flight has received nothing. A hung provider shows there
// before the idle-stream timeout fails the turn. Give them to a run with
// Options.Activities and to its views with event.View.SetSilence.
type Activities map[string]*llm.Activity

// NewActivities returns one Activity per agent.
func NewActivities(agents []Agent) Activities {
	a := make(Activities, len(agents))
	for _, ag := range agents {
		a[ag.ID] = llm.NewActivity()
	}
	return a
}

// SinceLastByte is how long agent's request in flight has received no
// byte; ok is false when it has none in flight (or is unknown). It is an
// event.Silence.
func (a Activities) SinceLastByte(agent string) (time.Duration, bool) {
	if act := a[agent]; act != nil {
		return act.SinceLastByte()
	}
	return 0, false
}

// watch returns ctx whose model requests report to agent's Activity.
func (a Activities) watch(ctx context.Context, agent string) context.Context {
	if act := a[agent]; act != nil {
		return llm.WithActivity(ctx, act)
	}
	return ctx
}
