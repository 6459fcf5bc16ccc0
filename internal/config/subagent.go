package config

import (
	"fmt"
	"slices"
)

// Subagents are orchestrator.coordination's subagent keys
// (internal/subagent acts on them).
type Subagents struct {
	Enabled bool // enable_subagents
	// DefaultTimeout, MinTimeout and MaxTimeout are seconds
	// (subagent_default_timeout, subagent_min_timeout,
	// subagent_max_timeout; 0: 300, 60, 600).
	DefaultTimeout, MinTimeout, MaxTimeout float64
	MaxConcurrent                          int      // subagent_max_concurrent (0: 3)
	Types                                  []string // subagent_types (nil: the default list)
	// Agents are subagent_orchestrator.agents when it is enabled: the
	// children's team. None: a child runs with the spawning agent's
	// backend.
	Agents []Agent
}

// subagentOrchestratorKeys are the keys of coordination.subagent_orchestrator.
// massgen acts on enabled and agents; the others are upstream's knobs of
// its child processes (a child's own answers, prompt and voting defaults),
// accepted (type-checked where massgen knows the type): a child runs with
// massgen's defaults (docs/subagents.md).
var subagentOrchestratorKeys = []string{"enabled", "agents", "max_new_answers", "inherit_spawning_agent_backend",
	"shared_child_team_types", "coordination", "enable_web_search", "parse_at_references", "final_answer_strategy",
	"disable_injection", "defer_voting_until_all_answered"}

// subagents reads one subagent key of orchestrator.coordination.
func (d *decoder) subagents(s *Subagents, t *pair, key string) {
	const secs = "a number of seconds"
	switch t.key {
	case "enable_subagents":
		s.Enabled, _ = d.boolean(key, t)
	case "subagent_default_timeout":
		s.DefaultTimeout = d.positive(key, t, secs)
	case "subagent_min_timeout":
		s.MinTimeout = d.positive(key, t, secs)
	case "subagent_max_timeout":
		s.MaxTimeout = d.positive(key, t, secs)
	case "subagent_max_concurrent":
		if v, ok := d.integer(key, t, "a positive whole number"); ok {
			if v < 1 {
				d.fail(t.val.pos, key, "subagent_max_concurrent must be at least 1", "")
				return
			}
			s.MaxConcurrent = v
		}
	case "subagent_types":
		s.Types, _ = d.stringList(key, t)
		if s.Types == nil && d.present(key, t) {
			s.Types = []string{}
		}
	case "background_subagents":
		// Background subagents are always offered (spawn_subagents'
		// background argument); the map is checked and kept.
		d.mapping(key, t, "a map ({enabled, injection_strategy})")
	case "subagent_orchestrator":
		m, ok := d.mapping(key, t, "a map ({enabled, agents: [...]})")
		if !ok {
			return
		}
		enabled := true
		if e := m.get("enabled"); e != nil {
			enabled, _ = d.boolean(join(key, "enabled"), e)
		}
		for _, p := range m.pairs {
			pkey := join(key, p.key)
			switch {
			case p.key == "agents" && enabled:
				s.Agents = d.childAgents(p, pkey)
			case p.key == "max_new_answers":
				d.integer(pkey, p, "a positive whole number")
			case !slices.Contains(subagentOrchestratorKeys, p.key):
				d.unknown(p, key, subagentOrchestratorKeys)
			}
		}
	}
}

func (d *decoder) positive(key string, t *pair, want string) float64 {
	v, ok := d.number(key, t, want)
	if ok && v <= 0 {
		d.fail(t.val.pos, key, fmt.Sprintf("%s must be more than 0", t.key), "")
		return 0
	}
	return v
}

// childAgents reads subagent_orchestrator.agents: entries of {id?, backend,
// system_message?}, each backend read as an agent's is.
func (d *decoder) childAgents(p *pair, key string) []Agent {
	if p.val.isNull() {
		return nil
	}
	if p.val.kind != kindSeq {
		d.typeError(key, p.val, "a list of agents (each entry '- backend: {type: ..., model: ...}')")
		return nil
	}
	var out []Agent
	for i, it := range p.val.items {
		path := index(key, i)
		if it.kind != kindMap {
			d.typeError(path, it, "a map with a 'backend'")
			continue
		}
		a := Agent{Line: it.pos.line, ID: fmt.Sprintf("subagent_agent_%d", i+1)}
		if id, ok := d.str(join(path, "id"), it.get("id")); ok && id != "" {
			a.ID = id
		}
		a.SystemMessage, _ = d.str(join(path, "system_message"), it.get("system_message"))
		bp := it.get("backend")
		if bp == nil || bp.val.kind != kindMap {
			d.fail(it.pos, join(path, "backend"), "a subagent agent has no backend", "add 'backend:' with at least 'type' and 'model'")
			continue
		}
		a.Backend = d.backend(bp, join(path, "backend"))
		out = append(out, a)
	}
	return out
}
