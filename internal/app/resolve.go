package app

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/examples"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/provider"
	"github.com/massgen/massgen/internal/redact"
)

// LoadEnv returns a getenv that sees the real environment first, then the
// .env files MassGen reads (./.env, then ~/.massgen/.env), then the one
// `massgen setup` writes (~/.config/massgen/.env). The first to set a
// variable wins.
func LoadEnv(env *Env) (func(string) string, error) {
	var paths []string
	paths = append(paths, filepath.Join(env.WorkDir, ".env"))
	if home := env.Getenv("HOME"); home != "" {
		paths = append(paths, filepath.Join(home, ".massgen", ".env"), filepath.Join(home, ".config", "massgen", ".env"))
	}
	files, err := config.LoadDotEnv(paths...)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	for k, v := range files {
		redact.SecretVar(k, v) // masked in every error text (see package redact)
	}
	return config.Getenv(files, env.Getenv), nil
}

// ResolveConfig finds the config to run, in MassGen's order: --config,
// quick mode (--model/--backend), ./.massgen/config.yaml, the user's
// ~/.config/massgen/config.yaml, then a team built from the API keys set.
func ResolveConfig(env *Env, f *Request, getenv func(string) string) (*config.Config, error) {
	cfg, err := resolveConfig(env, f, getenv)
	if err != nil {
		return nil, err
	}
	return cfg, applyModes(cfg, f)
}

// FirstAgent is Request.SingleAgent for the team's first agent.
const FirstAgent = "\x00first"

// applyModes narrows the team to Request.SingleAgent and applies
// Request.Quick: each agent's first answer is its only one (it votes
// next), and the winning answer is final, with no presentation.
// MassGen's --quick also defers votes until all have answered and has a
// presenter synthesise them; massgen keeps its own protocol.
func applyModes(cfg *config.Config, f *Request) error {
	if id := f.SingleAgent; id != "" {
		if id == FirstAgent {
			id = cfg.Agents[0].ID
		}
		i := slices.IndexFunc(cfg.Agents, func(a config.Agent) bool { return a.ID == id })
		if i < 0 {
			ids := make([]string, len(cfg.Agents))
			for j, a := range cfg.Agents {
				ids[j] = a.ID
			}
			return usageErr("--single-agent %s: the team has no such agent; its agents are %s", id, strings.Join(ids, ", "))
		}
		cfg.Agents = []config.Agent{cfg.Agents[i]}
	}
	if f.Quick {
		cfg.Orchestrator.MaxNewAnswersPerAgent, cfg.Orchestrator.UnlimitedAnswers = 1, false
		cfg.UI.EnableFinalPresentation = new(false)
	}
	if len(f.EvalCriteria) > 0 {
		applyEvalCriteria(cfg, f.EvalCriteria)
	}
	return nil
}

// applyEvalCriteria makes criteria the checklist's (--eval-criteria, over
// the config's checklist_criteria_inline, as upstream), and warns when no
// agent's votes are checklist-gated: then nothing reads them.
func applyEvalCriteria(cfg *config.Config, criteria []coord.Criterion) {
	o := &cfg.Orchestrator
	o.ChecklistCriteria = criteria
	gated := o.ChecklistGated
	for _, a := range cfg.Agents {
		gated = gated || a.VotingSensitivity == "checklist_gated"
	}
	if !gated {
		cfg.Warnings = append(cfg.Warnings, config.Diagnostic{Severity: config.Warning, Key: "--eval-criteria",
			Message:    "the criteria are used by checklist-gated voting, which this config does not turn on",
			Suggestion: "set orchestrator.voting_sensitivity: checklist_gated"})
	}
}

func resolveConfig(env *Env, f *Request, getenv func(string) string) (*config.Config, error) {
	if err := oneTeam(f); err != nil {
		return nil, err
	}
	switch {
	case f.Config != "":
		return LoadConfig(env, f.Config, getenv)
	case f.ConfigYAML != nil:
		cfg, err := config.Parse(f.ConfigYAML, cmp.Or(f.ConfigName, "config.yaml"), getenv)
		if err != nil {
			return nil, configErr(err)
		}
		return cfg, nil
	case len(f.Agents) > 0:
		cfg := config.New(f.Agents...)
		if err := cfg.Validate().Err(); err != nil {
			return nil, configErr(err)
		}
		return cfg, nil
	case f.Model != "" || f.Backend != "":
		return quickConfig(f, getenv)
	}
	if p := discoverConfig(env, getenv); p != "" {
		return loadFile(p, getenv)
	}
	return defaultTeam(getenv)
}

// oneTeam checks that a request names its team at most one way.
func oneTeam(f *Request) error {
	var ways []string
	for _, w := range []struct {
		set  bool
		name string
	}{{f.Config != "", "--config"}, {f.ConfigYAML != nil, "a config value"}, {len(f.Agents) > 0, "a team of agents"},
		{f.Model != "" || f.Backend != "", "--model or --backend"}} {
		if w.set {
			ways = append(ways, w.name)
		}
	}
	if len(ways) > 1 {
		return usageErr("%s cannot be combined with %s: choose one", ways[0], strings.Join(ways[1:], " or "))
	}
	return nil
}

// discoverConfig is the config file a run without --config or --model
// uses: ./.massgen/config.yaml, then ~/.config/massgen/config.yaml; "" when
// neither exists (the default team from the keys set).
func discoverConfig(env *Env, getenv func(string) string) string {
	candidates := []string{filepath.Join(env.WorkDir, ".massgen", "config.yaml")}
	if home := getenv("HOME"); home != "" {
		candidates = append(candidates, filepath.Join(home, ".config", "massgen", "config.yaml"))
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// LoadConfig loads the config a --config argument names: a file, an
// example (@examples/NAME) or a name in ~/.config/massgen/agents/.
func LoadConfig(env *Env, arg string, getenv func(string) string) (*config.Config, error) {
	if name, ok := strings.CutPrefix(arg, "@examples/"); ok {
		file, data, found := examples.Find(name)
		if !found {
			return nil, noExample(name)
		}
		cfg, err := config.Parse(data, "@examples/"+file, getenv)
		if err != nil {
			return nil, configErr(err)
		}
		return cfg, nil
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.WorkDir, p)
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		// MassGen also looks in ~/.config/massgen/agents/NAME(.yaml).
		if home := getenv("HOME"); home != "" {
			for _, alt := range []string{arg, arg + ".yaml"} {
				q := filepath.Join(home, ".config", "massgen", "agents", alt)
				if _, err := os.Stat(q); err == nil {
					return loadFile(q, getenv)
				}
			}
		}
		return nil, usageErr("config file not found: %s (try --config @examples/NAME; list them with `massgen examples`)", arg)
	}
	return loadFile(p, getenv)
}

// noExample is the error for an @examples name that matches nothing: the
// examples of the folder it points into, when there are some, else all;
// and, since the name may be one of MassGen's own (massgen ships its own
// library, not MassGen's), how to run MassGen's file itself.
func noExample(name string) error {
	near, where := examples.Near(name), "available"
	if len(near) > 0 {
		where = "in " + path.Dir(near[0])
	} else {
		near = examples.Names()
	}
	return usageErr("no example config matches %q; %s: %s\n"+
		"  (massgen ships its own examples, under MassGen's paths; to run one of MassGen's files, give its path: "+
		"--config path/to/massgen/configs/%s.yaml; `massgen examples` lists them all)",
		name, where, strings.Join(near, ", "), strings.TrimSuffix(name, ".yaml"))
}

func loadFile(p string, getenv func(string) string) (*config.Config, error) {
	cfg, err := config.Load(p, getenv)
	if err != nil {
		return nil, configErr(err)
	}
	return cfg, nil
}

// configErr reports config errors: one line for a single error, one line
// each (under a heading) for several.
func configErr(err error) error {
	sep := " "
	if strings.Contains(strings.TrimSpace(err.Error()), "\n") {
		sep = "\n"
	}
	return &Error{Kind: KindConfig, Err: fmt.Errorf("invalid config:%s%w", sep, err)}
}

// quickConfig builds a one-agent config from --model/--backend.
func quickConfig(f *Request, getenv func(string) string) (*config.Config, error) {
	a, err := modelAgent("agent", f.Model, f.Backend, getenv)
	if err != nil {
		return nil, err
	}
	a.SystemMessage, a.Backend.BaseURL = f.SystemMessage, f.BaseURL
	return config.New(a), nil
}

// ModelAgents is a team of the named models, one agent each, built as
// --model builds its single agent (backend inferred from the name). Each
// agent is named after its model (massgen mcp's models list).
func ModelAgents(models []string, getenv func(string) string) ([]config.Agent, error) {
	var out []config.Agent
	taken := map[string]bool{}
	for _, m := range models {
		id := agentID(m)
		for n := 2; taken[id]; n++ {
			id = fmt.Sprintf("%s_%d", agentID(m), n)
		}
		taken[id] = true
		a, err := modelAgent(id, m, "", getenv)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// agentID makes a model name usable as an agent id (and a log directory
// name): "groq/llama-3.3" → "groq_llama-3.3".
func agentID(model string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, cmp.Or(strings.TrimSpace(model), "agent"))
}

// modelAgent is an agent on model (or the model an alias stands for,
// provider.ResolveAlias), of backend type typ ("" infers it from the model
// name).
func modelAgent(id, model, typ string, getenv func(string) string) (config.Agent, error) {
	explicit := typ != ""
	// A short name (sonnet, opus, gpt, gemini, grok, …) is the catalogue's
	// current model of that family, unless --backend names a provider
	// whose own catalogue may call a model that.
	if m, ok := provider.ResolveAlias(model); ok && (typ == "" || typ == provider.InferType(m)) {
		model = m
	}
	if typ == "" {
		typ = provider.InferType(model)
		if typ == "" {
			hint := ""
			if m := provider.SuggestModel(model, getenv); m != "" {
				hint = fmt.Sprintf(" — did you mean %q?", m)
			}
			return config.Agent{}, usageErr("unknown model %q%s (or name its backend with --backend TYPE, one of %s)", model, hint, strings.Join(provider.Runnable(), ", "))
		}
	}
	if _, ok := provider.Lookup(typ); !ok {
		return config.Agent{}, usageErr("unknown backend type %q%s", typ, suggestType(typ))
	}
	// "groq/llama-3.3-70b-versatile" names the provider in front of the
	// model; the provider itself only knows the part after it (which may
	// have slashes of its own, as OpenRouter's "openai/gpt-4o" does).
	if p, rest, ok := strings.Cut(model, "/"); ok && p == typ && !explicit {
		model = rest
	}
	if model == "" && typ == "sim" {
		model = "sim"
	}
	if model == "" {
		return config.Agent{}, usageErr("--backend %s needs --model NAME", typ)
	}
	return config.Agent{ID: id, Backend: config.Backend{Type: typ, Model: model, Stream: true}}, nil
}

// defaultTeams lists, per key variable, the agent a default team gets.
var defaultTeams = []struct{ env, id, typ, model string }{
	{"OPENAI_API_KEY", "gpt", "openai", "gpt-4o-mini"},
	{"ANTHROPIC_API_KEY", "claude", "claude", "claude-sonnet-4-5"},
	{"GEMINI_API_KEY", "gemini", "gemini", "gemini-2.5-flash"},
	{"GOOGLE_API_KEY", "gemini", "gemini", "gemini-2.5-flash"},
	{"XAI_API_KEY", "grok", "grok", "grok-4-fast"},
	{"GROQ_API_KEY", "groq", "groq", "llama-3.3-70b-versatile"},
	{"OPENROUTER_API_KEY", "openrouter", "openrouter", "openai/gpt-4o-mini"},
}

// defaultTeam builds a team from the providers whose keys are set.
func defaultTeam(getenv func(string) string) (*config.Config, error) {
	var team []config.Agent
	var unlinked []string // keyed providers this program does not link (a library that did not import them)
	seen := map[string]bool{}
	for _, d := range defaultTeams {
		if getenv(d.env) == "" || seen[d.id] {
			continue
		}
		seen[d.id] = true
		if _, ok := llm.LookupProvider(d.typ); !ok {
			spec, _ := provider.Lookup(d.typ)
			unlinked = append(unlinked, d.env+" is set, but backend type "+d.typ+" is not linked into this program"+linkHint(spec.Wire))
			continue
		}
		team = append(team, config.Agent{ID: d.id, Backend: config.Backend{Type: d.typ, Model: d.model, Stream: true}})
	}
	if len(team) == 0 && len(unlinked) > 0 {
		return nil, usageErr("no config found, and no provider whose key is set is linked:\n  %s", strings.Join(unlinked, "\n  "))
	}
	if len(team) == 0 {
		return nil, usageErr("no config found and no API key set.\n" +
			"  Set one or more of OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, XAI_API_KEY, GROQ_API_KEY, OPENROUTER_API_KEY\n" +
			"  (in the environment or a .env file), or pass --config FILE, or try the simulator with no key at all:\n" +
			"    massgen --config @examples/sim_three_agents \"What is the capital of France?\"")
	}
	return config.New(team...), nil
}

func suggestType(typ string) string {
	lower := strings.ToLower(typ)
	for _, n := range provider.Names() {
		if n == lower {
			return fmt.Sprintf(" — did you mean %q?", n)
		}
	}
	return " (one of " + strings.Join(provider.Runnable(), ", ") + ")"
}
