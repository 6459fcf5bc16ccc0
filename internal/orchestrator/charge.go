package orchestrator

import (
	"sync"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// turnCharges are what an agent's tools charged during one of its tasks
// (tool.WithCharge: a subagent's whole run), added to the task's usage
// when it ends so that the events and logs count them too.
type turnCharges struct {
	mu   sync.Mutex
	u    llm.Usage
	cost float64
}

func (t *turnCharges) total() (llm.Usage, float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.u, t.cost
}

// charger is the charge function of agent id's task: a spend counts at
// once in the run's usage and cost (the budget is checked against them at
// the next message), priced by the tool; after the run has built its
// result it is refused, and the tool keeps it (subagent.Manager.Close).
func (r *runner) charger(id string, t *turnCharges) tool.ChargeFunc {
	return func(u llm.Usage, cost float64) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.ended {
			return false
		}
		r.usage[id].Add(u)
		r.cost[id] += cost
		t.mu.Lock()
		t.u.Add(u)
		t.cost += cost
		t.mu.Unlock()
		return true
	}
}
