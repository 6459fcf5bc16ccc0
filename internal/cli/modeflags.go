package cli

import (
	"cmp"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/kit/planmode"
)

// modeFlags are MassGen v0.1.73's mode flags (its TUI mode bar on the
// command line) and its plan and spec flags. Those massgen can honour
// change the run; the others stop it with what to use instead, never a
// bare "unknown flag".
type modeFlags struct {
	singleAgent  string
	coordination string
	quick        bool
	personas     string
	evalCriteria string // --eval-criteria FILE.json
	preset       string // --checklist-criteria-preset NAME (criteriapreset.go)
	fl           *pflag.FlagSet
	// plan and spec modes (planmode.go)
	plan, planAndExecute, spec bool
	executePlan, executeSpec   string
	planOpts                   planmode.Options
	broadcast                  string
}

// firstAgent is --single-agent given without an agent id.
const firstAgent = "\x00first"

// broadcastLater says why --broadcast human|agents cannot be honoured.
const broadcastLater = "broadcast (agents asking you or each other questions during a run) is not available yet: " +
	"put what they need to know in the question, or run a session (massgen with no question) and answer in the next turn"

func (m *modeFlags) register(fl *pflag.FlagSet) {
	m.fl = fl
	fl.StringVar(&m.singleAgent, "single-agent", "", "run only this agent of the team (the first with no `ID`: --single-agent or --single-agent=ID)")
	fl.Lookup("single-agent").NoOptDefVal = firstAgent
	fl.StringVar(&m.coordination, "coordination-mode", "", "parallel (agents answer and vote) or decomposition (each agent owns a subtask; they stop when done and a presenter merges the work); overrides the config's coordination_mode")
	fl.BoolVar(&m.quick, "quick", false, "each agent answers once, then votes; the winning answer is final (no presentation)")
	fl.StringVar(&m.preset, "checklist-criteria-preset", "", "one of upstream's criteria sets for checklist-gated voting ("+strings.Join(coord.PresetNames(), ", ")+"), instead of the config's; --eval-criteria wins")
	fl.StringVar(&m.evalCriteria, "eval-criteria", "", "a JSON file of evaluation criteria ([{\"text\", \"category\"}] or {\"criteria\": [...]}) for checklist-gated voting, instead of the config's")
	fl.StringVar(&m.personas, "personas", "", "perspective, implementation or methodology: before the run each agent gets a persona of that kind written for the task (persona_generator); off: none, whatever the config says")
	fl.BoolVar(&m.plan, "plan", false, "plan mode: the agents write project_plan.json instead of doing the work; the winner's is frozen in .massgen/plans/")
	fl.BoolVar(&m.planAndExecute, "plan-and-execute", false, "plan mode, then a run that executes the frozen plan")
	fl.StringVar(&m.executePlan, "execute-plan", "", "execute a stored plan (its directory, its id or latest), each agent starting with it as its task plan")
	fl.BoolVar(&m.spec, "spec", false, "spec mode: the agents write the requirements (EARS) in project_spec.json; the winner's is frozen")
	fl.StringVar(&m.executeSpec, "execute-spec", "", "implement a stored spec (its directory, its id or latest)")
	fl.StringVar(&m.planOpts.Depth, "plan-depth", "", "plan granularity: dynamic (default), shallow (5-10 tasks), medium (20-50), deep (100-200+)")
	fl.StringVar(&m.planOpts.Thoroughness, "plan-thoroughness", "", "standard (default) or thorough (strategic reasoning, risks, anti-patterns)")
	fl.IntVar(&m.planOpts.Steps, "plan-steps", 0, "a target task count for --plan")
	fl.IntVar(&m.planOpts.Chunks, "plan-chunks", 0, "a target chunk count for --plan and --spec (default 1)")
	fl.StringVar(&m.broadcast, "broadcast", "", "false: what massgen does; human and agents are not available yet")
}

// apply puts the mode flags into rq, or says why one cannot be honoured.
// --single-agent ID "question" is two words after the flag: the first is
// the agent (as upstream reads it), when --single-agent had no =ID.
func (m *modeFlags) apply(rq *app.Request, args []string) ([]string, error) {
	switch strings.ToLower(m.broadcast) {
	case "", "false":
	case "human", "agents":
		return args, usageErr("--broadcast %s: %s", m.broadcast, broadcastLater)
	default:
		return args, usageErr("--broadcast takes human, agents or false, not %q", m.broadcast)
	}
	if err := m.checkPlan(); err != nil {
		return args, err
	}
	switch strings.ToLower(m.coordination) {
	case "":
	case "parallel", "voting":
		rq.CoordinationMode = "voting"
	case "decomposition":
		if p := strings.ToLower(m.personas); p != "" && p != "off" {
			return args, usageErr("--personas requires parallel coordination mode, not decomposition")
		}
		rq.CoordinationMode = "decomposition"
	default:
		return args, usageErr("--coordination-mode takes parallel or decomposition, not %q", m.coordination)
	}
	switch p := strings.ToLower(m.personas); p {
	case "":
	case "off", "perspective", "implementation", "methodology":
		rq.Personas = p
	default:
		return args, usageErr("--personas takes off, perspective, implementation or methodology, not %q", m.personas)
	}
	if m.singleAgent != "" {
		if m.coordination == "decomposition" {
			return args, usageErr("--single-agent and --coordination-mode decomposition do not go together")
		}
		id := m.singleAgent
		if id == firstAgent {
			id = ""
			if len(args) == 2 {
				id, args = args[0], slices.Clone(args[1:])
			}
		}
		rq.SingleAgent = cmp.Or(id, app.FirstAgent)
	}
	rq.Quick = m.quick
	if err := m.applyPreset(rq); err != nil {
		return args, err
	}
	if m.evalCriteria != "" {
		data, err := os.ReadFile(m.evalCriteria)
		if err != nil {
			return args, usageErr("--eval-criteria: %v", err)
		}
		if rq.EvalCriteria, err = config.CriteriaFromJSON(data); err != nil {
			return args, usageErr("--eval-criteria %s: %v", m.evalCriteria, err)
		}
	}
	return args, nil
}
