package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
)

// File is where filesystem mode keeps the plan, in the agent's workspace.
const File = "tasks/plan.json"

// maxPlanFile bounds the plan read back from the workspace.
const maxPlanFile = 4 << 20

// Files is what the planner needs of the agent's Guard
// (*workspace.Guard): every byte of tasks/plan.json goes through it.
type Files interface {
	WriteFile(p string, data []byte) (real string, created bool, err error)
	ReadFile(p string, max int64) (data []byte, size int64, real string, err error)
	Remove(p string) (real string, err error)
}

// Options are one agent's planner.
type Options struct {
	Rules
	Framework
	// Owner is written as the plan's agent_id: an anonymous token, never
	// the agent's real id, since the others see the plan in its snapshot.
	Owner string
	// Files, when set, keeps the plan in tasks/plan.json (filesystem mode).
	Files Files
	// Initial, when set, is the plan each round starts from (an execution
	// run's frozen plan, tasks/plan.json's short or full form): a new
	// round puts it back in tasks/plan.json instead of leaving no plan.
	Initial []byte
}

// Planner is one agent's task plan behind its tools. It is safe for
// concurrent use.
type Planner struct {
	mu     sync.Mutex
	o      Options
	plan   *Plan // nil: none yet (filesystem mode reads the file first)
	loaded bool
	rounds int
}

// New is a planner with no plan.
func New(o Options) *Planner {
	return &Planner{o: o}
}

// current is the plan, read from tasks/plan.json the first time in
// filesystem mode (a plan laid there before the run, as --execute-plan
// does), else an empty one. Called with mu held.
func (pl *Planner) current() *Plan {
	if pl.plan == nil && !pl.loaded && pl.o.Files != nil {
		pl.loaded = true
		if p, err := pl.read(); err == nil && p != nil {
			pl.plan = p
		}
	}
	if pl.plan == nil {
		pl.plan = newPlan(pl.o.Owner, pl.o.Rules)
	}
	return pl.plan
}

// read parses tasks/plan.json: upstream's full form (agent_id, tasks with
// statuses and timestamps) or the short one ({"tasks": [...]}, each a
// description or a task spec). nil, nil when there is none.
func (pl *Planner) read() (*Plan, error) {
	data, _, _, err := pl.o.Files.ReadFile(File, maxPlanFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var full Plan
	if err := json.Unmarshal(data, &full); err == nil && full.AgentID != "" && full.CreatedAt != "" {
		full.AgentID = pl.o.Owner
		if full.Subagents == nil {
			full.Subagents = map[string]any{}
		}
		for _, t := range full.Tasks {
			if t.Metadata == nil {
				t.Metadata = map[string]any{}
			}
			if inj, _ := t.Metadata["injected"].(bool); inj {
				if full.framework == nil {
					full.framework = map[string]bool{}
				}
				full.framework[t.ID] = true
			}
		}
		if c := full.cycle(); c != nil {
			return nil, fmt.Errorf("%s has a dependency cycle", File)
		}
		return &full, nil
	}
	var short struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	if err := json.Unmarshal(data, &short); err != nil {
		return nil, err
	}
	specs, err := decodeSpecs(short.Tasks)
	if err != nil {
		return nil, err
	}
	r := pl.o.Rules
	r.RequireVerification = false // a plan written for execution, checked when it was made
	r.MaxTasks = max(r.max(), len(specs))
	return create(pl.o.Owner, specs, Framework{}, r)
}

// save writes the plan in filesystem mode. Called with mu held.
func (pl *Planner) save() error {
	if pl.o.Files == nil {
		return nil
	}
	data, err := json.MarshalIndent(pl.current(), "", "  ")
	if err != nil {
		return err
	}
	if _, _, err := pl.o.Files.WriteFile(File, data); err != nil {
		return fmt.Errorf("the plan changed but %s could not be written: %w", File, err)
	}
	return nil
}

// Reset clears the plan, in memory and tasks/plan.json, and says whether
// there was one.
func (pl *Planner) Reset() (bool, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.reset()
}

func (pl *Planner) reset() (bool, error) {
	had := pl.plan != nil && len(pl.plan.Tasks) > 0
	pl.plan, pl.loaded = nil, true
	if pl.o.Files == nil {
		return had, nil
	}
	if _, err := pl.o.Files.Remove(File); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return had, fmt.Errorf("could not remove %s: %w", File, err)
	}
	return had, nil
}

// Round is the agent's BeforeRound: each coordination round after the
// first starts with no plan, as upstream clears the plan before an agent
// restarts (the first keeps a plan laid before the run), or with Initial.
func (pl *Planner) Round() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.rounds++
	if pl.rounds == 1 {
		return
	}
	_, _ = pl.reset() // a file that cannot go is replaced on the next save
	if pl.o.Initial != nil && pl.o.Files != nil {
		if _, _, err := pl.o.Files.WriteFile(File, pl.o.Initial); err == nil {
			pl.loaded = false
		}
	}
}

// Snapshot is a copy of the plan as tasks/plan.json would hold it (nil:
// no tasks).
func (pl *Planner) Snapshot() *Plan {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.plan == nil || len(pl.plan.Tasks) == 0 {
		return nil
	}
	data, _ := json.Marshal(pl.plan)
	var p Plan
	_ = json.Unmarshal(data, &p)
	return &p
}
