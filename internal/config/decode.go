package config

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// decoder fills a Config from the tree. It checks shapes and types (a map
// where a map belongs, a boolean where a boolean belongs) because only it
// sees the source; value rules that also apply to configs built in code
// (known backend type, enum values, ranges) live in Validate. A key that
// fails here is marked bad so Validate does not report it a second time.
type decoder struct {
	file    string
	getenv  func(string) string
	cfg     *Config
	diags   Diagnostics
	stopped bool   // a v1 or non-map config: further checks would only add noise
	agentID string // id of the agent being decoded, for IgnoredFeatures ("" outside agents)
}

func (d *decoder) errorAt(p pos, key, msg, sugg string) {
	d.diags = append(d.diags, Diagnostic{Severity: Error, File: d.file, Line: p.line, Col: p.col, Key: key, Message: msg, Suggestion: sugg})
}

func (d *decoder) warnAt(p pos, key, msg, sugg string) {
	d.diags = append(d.diags, Diagnostic{Severity: Warning, File: d.file, Line: p.line, Col: p.col, Key: key, Message: msg, Suggestion: sugg})
}

// fail reports an error on a key and marks it (and so its children) bad.
func (d *decoder) fail(p pos, key, msg, sugg string) {
	d.cfg.bad[key] = true
	d.errorAt(p, key, msg, sugg)
}

const wantBool = "a boolean (true or false)"

func (d *decoder) typeError(key string, n *node, want string) {
	d.fail(n.pos, key, fmt.Sprintf("must be %s, got %s", want, describe(n)), unquoteHint(n, want))
}

// unquoteHint spots the commonest type mistake, a quoted scalar ("1800",
// "true"), which YAML reads as a string.
func unquoteHint(n *node, want string) string {
	if n.kind != kindString {
		return ""
	}
	if want == wantBool {
		if n.s == "true" || n.s == "false" {
			return "remove the quotes: " + n.s
		}
		return ""
	}
	numeric := strings.Contains(want, "number") || strings.Contains(want, "integer") || strings.Contains(want, "seconds")
	if _, err := strconv.ParseFloat(n.s, 64); err == nil && numeric {
		return "remove the quotes: " + n.s
	}
	return ""
}

// present records where a key's value is and reports whether it has one;
// `key:` with nothing after it counts as absent, as upstream's .get() sees None.
func (d *decoder) present(key string, p *pair) bool {
	if p == nil {
		return false
	}
	d.cfg.loc[key] = p.val.pos
	return !p.val.isNull()
}

func (d *decoder) str(key string, p *pair) (string, bool) {
	if !d.present(key, p) {
		return "", false
	}
	if p.val.kind != kindString {
		d.typeError(key, p.val, "a string")
		return "", false
	}
	return p.val.s, true
}

func (d *decoder) boolean(key string, p *pair) (bool, bool) {
	if !d.present(key, p) {
		return false, false
	}
	if p.val.kind != kindBool {
		d.typeError(key, p.val, wantBool)
		return false, false
	}
	return p.val.b, true
}

func (d *decoder) integer(key string, p *pair, want string) (int, bool) {
	if !d.present(key, p) {
		return 0, false
	}
	if p.val.kind != kindInt {
		d.typeError(key, p.val, want)
		return 0, false
	}
	return int(p.val.i), true
}

func (d *decoder) number(key string, p *pair, want string) (float64, bool) {
	if !d.present(key, p) {
		return 0, false
	}
	switch p.val.kind {
	case kindInt:
		return float64(p.val.i), true
	case kindFloat:
		return p.val.f, true
	}
	d.typeError(key, p.val, want)
	return 0, false
}

func (d *decoder) mapping(key string, p *pair, want string) (*node, bool) {
	if !d.present(key, p) {
		return nil, false
	}
	if p.val.kind != kindMap {
		d.typeError(key, p.val, want)
		return nil, false
	}
	return p.val, true
}

func (d *decoder) stringList(key string, p *pair) ([]string, bool) {
	if !d.present(key, p) {
		return nil, false
	}
	if p.val.kind != kindSeq {
		d.typeError(key, p.val, "a list of strings")
		return nil, false
	}
	out := make([]string, 0, len(p.val.items))
	ok := true
	for i, it := range p.val.items {
		if it.kind != kindString {
			d.typeError(index(key, i), it, "a string")
			ok = false
			continue
		}
		out = append(out, it.s)
	}
	return out, ok
}

// mapItems walks a list whose items are maps: a key that is not a list,
// or an item that is not a map, is a type error (list and item say what
// was wanted); each map item is yielded with its key (e.g. "tools[2]"),
// its position recorded for later diagnostics.
func (d *decoder) mapItems(p *pair, key, list, item string) iter.Seq2[string, *node] {
	return func(yield func(string, *node) bool) {
		if !d.present(key, p) {
			return
		}
		if p.val.kind != kindSeq {
			d.typeError(key, p.val, list)
			return
		}
		for i, it := range p.val.items {
			ikey := index(key, i)
			if it.kind != kindMap {
				d.typeError(ikey, it, item)
				continue
			}
			d.cfg.loc[ikey] = it.pos
			if !yield(ikey, it) {
				return
			}
		}
	}
}

// unknown warns about a key nobody knows at this level.
func (d *decoder) unknown(p *pair, path string, known []string) {
	key := join(path, p.key)
	sugg := didYouMean(p.key, known)
	if t, ok := keyHints[p.key]; ok && sugg == "" && slices.Contains(known, t) {
		sugg = fmt.Sprintf("did you mean '%s'?", t)
	}
	d.ignore(p.keyPos, key, p.key, fmt.Sprintf("unknown key '%s' is ignored", p.key), sugg)
}

func (d *decoder) decode(root *node) {
	c := d.cfg
	c.Orchestrator = DefaultOrchestrator()
	c.UI = DefaultUI()
	if root.kind != kindMap {
		d.errorAt(root.pos, "", "a config must be a map with an 'agents:' list, got "+describe(root), "see the MassGen config format")
		d.stopped = true
		return
	}
	var v1 []string
	var v1pos pos
	for _, p := range root.pairs {
		if slices.Contains(v1Keys, p.key) {
			if v1 == nil {
				v1pos = p.keyPos
			}
			v1 = append(v1, p.key)
		}
	}
	if v1 != nil {
		d.errorAt(v1pos, "", fmt.Sprintf("this is a MassGen v1 config (found %s), which is no longer supported", strings.Join(v1, ", ")),
			"rewrite it in the current format: an 'agents:' list where each agent has an 'id' and a 'backend' with 'type' and 'model'")
		d.stopped = true
		return
	}
	if root.get("agents") == nil && root.get("agent") == nil && isRateLimitsFile(root) {
		c.bad["agents"] = true
		d.errorAt(root.pairs[0].keyPos, "", "this is a rate-limits file (upstream's rate_limits.yaml: provider → model → rpm/tpm/rpd), not a team config",
			"massgen does not read it: pace a backend with requests_per_minute / tokens_per_minute, and pass a config with 'agents:'")
		d.stopped = true
		return
	}
	for _, p := range root.pairs {
		if !slices.Contains(topLevelKeys, p.key) {
			d.unknown(p, "", topLevelKeys)
		}
	}
	d.agents(root)
	d.timeoutSettings(root.get("timeout_settings"))
	d.orchestrator(root.get("orchestrator"))
	d.ui(root.get("ui"))
	if m, ok := d.mapping("memory", root.get("memory"), "a map"); ok {
		d.unsupported(root.get("memory"), "memory")
		d.extra(&c.Extra, "memory", m)
	}
	if hp := root.get("hooks"); d.present("hooks", hp) {
		d.unsupported(hp, "hooks")
		d.extra(&c.Extra, "hooks", hp.val)
	}
	if s, ok := d.str("session_id", root.get("session_id")); ok {
		d.unsupported(root.get("session_id"), "session_id")
		d.extra(&c.Extra, "session_id", &node{kind: kindString, s: s})
	}
	for _, p := range root.pairs {
		if s, ok := topLevelUpstream[p.key]; ok && d.upstreamValue(p, p.key, s) {
			d.extra(&c.Extra, p.key, p.val)
		}
		if _, ok := placeholderKeys[p.key]; ok && d.present(p.key, p) {
			d.placeholder(p, p.key, p.key)
			d.extra(&c.Extra, p.key, p.val)
		}
	}
}

func (d *decoder) extra(m *map[string]any, key string, n *node) {
	if *m == nil {
		*m = map[string]any{}
	}
	(*m)[key] = plain(n)
}

func (d *decoder) agents(root *node) {
	c := d.cfg
	list, single := root.get("agents"), root.get("agent")
	switch {
	case list == nil && single == nil:
		c.bad["agents"] = true
		d.errorAt(pos{1, 1}, "", "the config defines no agents", "add an 'agents:' list, or a single 'agent:' map")
	case list != nil && single != nil:
		c.bad["agents"] = true
		later := max(list.keyPos.line, single.keyPos.line)
		p := list.keyPos
		if single.keyPos.line == later {
			p = single.keyPos
		}
		d.errorAt(p, "", "the config has both 'agents' and 'agent'", "use 'agents:' (a list) for several agents or 'agent:' (a map) for one")
	case list != nil:
		c.loc["agents"] = list.keyPos
		n := list.val
		if n.kind != kindSeq && !n.isNull() {
			d.typeError("agents", n, "a list of agents (each entry '- id: ...')")
			return
		}
		if len(n.items) == 0 {
			d.fail(list.keyPos, "agents", "'agents' is empty", "add at least one agent with an 'id' and a 'backend'")
			return
		}
		for i, it := range n.items {
			d.agent(it, index("agents", i))
		}
		if len(c.Agents) == 0 {
			c.bad["agents"] = true // every entry failed and was reported
		}
	default:
		c.single = true
		c.loc["agent"] = single.keyPos
		if single.val.kind != kindMap {
			d.typeError("agent", single.val, "a map with 'id' and 'backend'")
			c.bad["agents"] = true
			return
		}
		d.agent(single.val, "agent")
	}
}

func (d *decoder) agent(n *node, path string) {
	c := d.cfg
	if n.kind != kindMap {
		d.typeError(path, n, "a map with 'id' and 'backend'")
		return
	}
	c.loc[path] = n.pos
	a := Agent{Line: n.pos.line}
	if id, ok := d.str(join(path, "id"), n.get("id")); ok {
		a.ID = id
	} else if c.single && !c.bad[join(path, "id")] {
		a.ID = DefaultSingleAgentID // upstream's runtime names a lone agent; no need to ask
	}
	d.agentID = a.ID
	defer func() { d.agentID = "" }()
	a.SystemMessage, _ = d.str(join(path, "system_message"), n.get("system_message"))
	if m, ok := d.mapping(join(path, "memory"), n.get("memory"), "a map"); ok {
		d.unsupported(n.get("memory"), join(path, "memory"))
		d.extra(&a.Extra, "memory", m)
	}
	for _, p := range n.pairs {
		key := join(path, p.key)
		switch s, upstream := agentUpstream[p.key]; {
		case p.key == "voting_sensitivity" && p.val.kind == kindString && slices.Contains(votingValues, p.val.s):
			// An agent's own voting sensitivity: its prompt level and
			// whether its votes are checklist-gated (Settings).
			a.VotingSensitivity = p.val.s
			if level, ok := votingFallback[p.val.s]; ok && p.val.s != "checklist_gated" {
				d.ignore(p.val.pos, key, "voting_sensitivity: "+p.val.s, fmt.Sprintf(
					"voting_sensitivity '%s' is accepted, but this version does not support it yet: this agent votes by the '%s' rules", p.val.s, level), "")
			}
		case p.key == "subtask":
			if v, ok := d.str(key, p); ok {
				a.Subtask = strings.TrimSpace(v)
			}
		case upstream:
			if d.upstreamValue(p, key, s) {
				d.extra(&a.Extra, p.key, p.val)
			}
		case p.key == "append_system_prompt":
			if d.present(key, p) {
				d.placeholder(p, key, "agent.append_system_prompt")
				d.extra(&a.Extra, p.key, p.val)
			}
		case !slices.Contains(agentKeys, p.key):
			d.unknown(p, path, agentKeys)
		}
	}
	bpath := join(path, "backend")
	bp := n.get("backend")
	switch {
	case bp == nil || bp.val.isNull():
		d.fail(n.pos, bpath, "agent has no backend", "add 'backend:' with at least 'type' and 'model', e.g. {type: openai, model: gpt-4o}")
	case bp.val.kind != kindMap:
		d.typeError(bpath, bp.val, "a map with 'type' and 'model'")
	default:
		a.Backend = d.backend(bp, bpath)
	}
	c.Agents = append(c.Agents, a)
	c.agentPaths = append(c.agentPaths, path)
}

// isRateLimitsFile recognises upstream's rate-limits file, which sits among
// its example configs: provider → model → {rpm, tpm, rpd}.
func isRateLimitsFile(root *node) bool {
	if len(root.pairs) == 0 {
		return false
	}
	for _, p := range root.pairs {
		if p.val.kind != kindMap || len(p.val.pairs) == 0 {
			return false
		}
		for _, m := range p.val.pairs {
			if m.val.kind != kindMap {
				return false
			}
			for _, l := range m.val.pairs {
				if !slices.Contains([]string{"rpm", "tpm", "rpd"}, l.key) {
					return false
				}
			}
		}
	}
	return true
}
