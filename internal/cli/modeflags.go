package cli

import (
	"cmp"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/config"
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
	fl           *pflag.FlagSet
}

// firstAgent is --single-agent given without an agent id.
const firstAgent = "\x00first"

// planFlags are v0.1.73's plan and spec mode flags: not available.
var planFlags = func() []laterFlag {
	plan := "plan mode is not available yet: ask the team for the plan in the question " +
		"(massgen \"Write a step-by-step plan for …\"), with a cwd in the config so the agents can write it as a file; " +
		"the winner's answer is the plan the others voted for"
	spec := "spec mode is not available yet: ask the team for the requirements in the question " +
		"(massgen \"Write the requirements (EARS) for …\"), with a cwd in the config so the agents can write them as a file"
	execute := "executing a stored plan or spec is not available yet: give the plan to the team in the question, " +
		"or share its file: massgen \"Carry out the plan in @plan.json\" (an @path in the question is shared read-only)"
	broadcast := "broadcast (agents asking you or each other questions during a run) is not available yet: " +
		"put what they need to know in the question, or run a session (massgen with no question) and answer in the next turn"
	return []laterFlag{
		{name: "plan", do: plan}, {name: "plan-and-execute", do: plan},
		{name: "plan-depth", value: true, do: plan}, {name: "plan-thoroughness", value: true, do: plan},
		{name: "plan-steps", value: true, do: plan}, {name: "plan-chunks", value: true, do: plan},
		{name: "spec", do: spec}, {name: "execute-plan", value: true, do: execute}, {name: "execute-spec", value: true, do: execute},
		{name: "broadcast", value: true, do: broadcast},
	}
}()

func (m *modeFlags) register(fl *pflag.FlagSet) {
	m.fl = fl
	fl.StringVar(&m.singleAgent, "single-agent", "", "run only this agent of the team (the first with no `ID`: --single-agent or --single-agent=ID)")
	fl.Lookup("single-agent").NoOptDefVal = firstAgent
	fl.StringVar(&m.coordination, "coordination-mode", "", "parallel: what massgen does (agents answer and vote); decomposition is not available yet")
	fl.BoolVar(&m.quick, "quick", false, "each agent answers once, then votes; the winning answer is final (no presentation)")
	fl.StringVar(&m.evalCriteria, "eval-criteria", "", "a JSON file of evaluation criteria ([{\"text\", \"category\"}] or {\"criteria\": [...]}) for checklist-gated voting, instead of the config's")
	fl.StringVar(&m.personas, "personas", "", "perspective, implementation or methodology: before the run each agent gets a persona of that kind written for the task (persona_generator); off: none, whatever the config says")
	for _, f := range planFlags {
		if f.value {
			fl.String(f.name, "", "")
		} else {
			fl.Bool(f.name, false, "")
		}
		_ = fl.MarkHidden(f.name)
	}
	for _, n := range []string{"coordination-mode"} {
		_ = fl.MarkHidden(n)
	}
}

// apply puts the mode flags into rq, or says why one cannot be honoured.
// --single-agent ID "question" is two words after the flag: the first is
// the agent (as upstream reads it), when --single-agent had no =ID.
func (m *modeFlags) apply(rq *app.Request, args []string) ([]string, error) {
	for _, f := range planFlags {
		if m.fl != nil && m.fl.Changed(f.name) {
			return args, usageErr("--%s: %s", f.name, f.do)
		}
	}
	switch strings.ToLower(m.coordination) {
	case "", "parallel", "voting":
	case "decomposition":
		return args, usageErr("--coordination-mode decomposition (subtasks, one per agent) is not available yet: " +
			"massgen runs parallel coordination (every agent answers the whole question, then they vote); " +
			"to split the work, ask for one part per run, or give each agent a system_message naming its part")
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
