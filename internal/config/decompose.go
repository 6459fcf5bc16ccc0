package config

import (
	"fmt"
	"slices"
	"strings"
)

// Decomposition is decomposition mode's configuration (MassGen v0.1.73):
// orchestrator.coordination_mode: decomposition, presenter_agent,
// orchestrator.coordination.task_decomposer, and each agent's subtask
// (Agent.Subtask). coord.Settings.Decomposition and Presenter carry the
// protocol's part; orchestrator.Subtasks the subtasks.
type Decomposition struct {
	On        bool   // coordination_mode: decomposition
	Presenter string // presenter_agent: who merges the work ("" or unknown: the last agent)
	// NoDecomposer is task_decomposer.enabled: false. By default a call
	// before the run writes the subtasks the config leaves out; Guidelines
	// are its decomposition_guidelines.
	NoDecomposer bool
	Guidelines   string
}

var taskDecomposerKeys = []string{"enabled", "decomposition_guidelines", "timeout_seconds"}

// decomposition reads the orchestrator's coordination_mode and
// presenter_agent.
func (d *decoder) decomposition(e *pair, key string) {
	o := &d.cfg.Orchestrator.Decomposition
	v, ok := d.str(key, e)
	if !ok {
		return
	}
	switch e.key {
	case "coordination_mode":
		switch v = strings.TrimSpace(v); v {
		case "voting", "":
			o.On = false
		case "decomposition":
			o.On = true
		default:
			d.fail(e.val.pos, key, fmt.Sprintf("invalid coordination_mode '%s'", v), oneOf(v, coordinationModes))
		}
	case "presenter_agent":
		o.Presenter = strings.TrimSpace(v)
	}
}

// taskDecomposer reads coordination.task_decomposer (upstream reads it
// there; orchestrator.task_decomposer is read the same way): enabled
// (default true), decomposition_guidelines; timeout_seconds is accepted,
// the call being bounded like the other calls before the run.
func (d *decoder) taskDecomposer(e *pair, key string) {
	m, ok := d.mapping(key, e, "a map with 'enabled'")
	if !ok {
		return
	}
	o := &d.cfg.Orchestrator.Decomposition
	for _, t := range m.pairs {
		tkey := join(key, t.key)
		switch t.key {
		case "enabled":
			if b, ok := d.boolean(tkey, t); ok {
				o.NoDecomposer = !b
			}
		case "decomposition_guidelines":
			if t.val.kind != kindNull {
				o.Guidelines, _ = d.str(tkey, t)
			}
		case "timeout_seconds":
			_, _ = d.number(tkey, t, "a number of seconds")
		default:
			d.unknown(t, key, taskDecomposerKeys)
		}
	}
}

// decomposition warns about what decomposition mode will not use: a
// presenter_agent that names no agent (upstream then has the last agent
// present, and so does massgen), and subtasks outside decomposition mode.
func (v *validator) decomposition() {
	c := v.c
	warn := func(key, msg string) {
		p := c.at(key)
		v.diags = append(v.diags, Diagnostic{Severity: Warning, File: c.Path, Line: p.line, Col: p.col, Key: key, Message: msg})
	}
	if p := c.Orchestrator.Decomposition.Presenter; p != "" && !slices.ContainsFunc(c.Agents, func(a Agent) bool { return a.ID == p }) {
		warn("orchestrator.presenter_agent", fmt.Sprintf("presenter_agent '%s' is not one of the agents: the last agent presents", p))
	}
	if c.Orchestrator.Decomposition.On {
		return
	}
	for i, a := range c.Agents {
		if a.Subtask != "" {
			warn(join(c.agentPath(i), "subtask"), "'subtask' is used only with orchestrator.coordination_mode: decomposition")
		}
	}
}
