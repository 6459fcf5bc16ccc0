package app

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/provider"
	"github.com/massgen/massgen/internal/redact"
	"github.com/massgen/massgen/internal/tool/custom"
	"github.com/massgen/massgen/internal/tool/mcp"
)

// team is a ready-to-run set of agents plus what must be stopped afterwards.
// Its models are safe to share: massgen serve runs many requests on one
// team, so that they share its rate limiters and circuit breakers too.
type team struct {
	agents  []orchestrator.Agent
	guards  *llm.Guards // the agents' circuit breakers and rate limiters
	sims    []*llmsim.Server
	python  *custom.Python       // the runner of the team's Python tools, if any
	mcp     *mcp.Pool            // the team's MCP servers, if any (mcp.go)
	mcpMu   sync.Mutex           // serialises the pool's warnings
	warned  atomic.Bool          // its config's and build's warnings were printed (warnings.go)
	mcpRuns map[*runIgnored]bool // the runs in progress, told of the servers left out (guarded by mcpMu)
	// mcpPending are the pool's warnings from when no run was in
	// progress, for the next run (guarded by mcpMu).
	mcpPending []string
	warnings   []string              // for the user, once
	notes      []string              // for each run's log
	dropped    []string              // what the config asks that the agents go without (customtools.go): every run reports it
	cli        map[string]*cliMember // the coding-agent CLIs among the agents, by id (cliagents.go)
}

func (t *team) Close() {
	for _, s := range t.sims {
		s.Close()
	}
	if t.python != nil {
		t.python.Close()
	}
	if t.mcp != nil {
		t.mcp.Close()
	}
}

// buildTeam turns config agents into orchestrator agents: it resolves API
// keys and base URLs, starts the in-process simulator for `type: sim`, and
// wraps every model in the shared retry policy. It fails before any request
// is made when a key is missing, naming the variable to set. Retries are
// logged to the logger of the run that made the request (runLog).
func buildTeam(cfg *config.Config, getenv func(string) string, workDir string) (*team, error) {
	t := &team{}
	sims, err := t.startSims(cfg)
	if err != nil {
		t.Close()
		return nil, err
	}
	// One breaker and one rate limiter per endpoint and model, shared by
	// the agents that use them.
	t.guards = &llm.Guards{IdleTimeout: seconds(cfg.Orchestrator.StreamIdleTimeoutSeconds)}
	var problems []error
	for _, a := range cfg.Agents {
		if spec, _ := provider.Lookup(a.Backend.Type); spec.Wire == provider.WireCLI && provider.Judge(a.Backend.Type, a.Backend.Model, a.Backend.BaseURL).OK() {
			if err := t.addCLIAgent(a, getenv); KindOf(err) == KindConfig {
				problems = append(problems, err)
			} else if err != nil {
				t.Close()
				return nil, err
			}
			continue
		}
		m, params, endpoint, err := buildModel(a, getenv, sims)
		if KindOf(err) == KindConfig {
			problems = append(problems, err) // name them all: one fix-and-retry round, not one per agent
			continue
		}
		if err != nil {
			t.Close()
			return nil, err
		}
		if m, err = workflowActions(a, m, endpoint); err != nil {
			problems = append(problems, err)
			continue
		}
		retries := llm.RetryPolicy{OnRetry: func(ctx context.Context, attempt int, err error, d time.Duration) {
			runLog(ctx).Warn("retrying model request", "agent", a.ID, "attempt", attempt, "delay", d, "error", err)
		}}
		info, priced, err := provider.LookupModel(modelName(a), getenv)
		if err != nil {
			t.Close()
			return nil, usageErr("%v", err)
		}
		var cost func(llm.Usage) float64
		if priced {
			cost = info.Cost
		} else {
			t.notes = append(t.notes, fmt.Sprintf("agent %s: model %q is not in the model catalogue: its cost is not counted", a.ID, modelName(a)))
			// The same judgement and words as `massgen config validate`.
			if problem, sugg := provider.ModelWarning(a.Backend.Type, modelName(a), a.Backend.BaseURL, getenv); problem != "" {
				t.warnings = append(t.warnings, fmt.Sprintf("agent %s: %s — %s", a.ID, problem, sugg))
			}
		}
		m = t.guards.Wrap(m, llm.Route{Provider: a.Backend.Type, Endpoint: endpoint, Model: modelName(a),
			RequestsPerMinute: a.Backend.RequestsPerMinute, TokensPerMinute: a.Backend.TokensPerMinute}, retries)
		t.agents = append(t.agents, orchestrator.Agent{
			ID: a.ID, Backend: a.Backend.Type, ModelName: modelName(a), Model: m,
			Params: params, SystemMessage: a.SystemMessage, Simulated: a.Backend.Type == "sim", Cost: cost,
		})
	}
	if len(problems) > 0 {
		t.Close()
		return nil, agentsErr(problems)
	}
	if err := t.addCustomTools(cfg, workDir, getenv); err != nil {
		t.Close()
		return nil, err
	}
	if err := t.addMCPTools(cfg, workDir); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// agentsErr reports the agents that cannot start, all of them.
func agentsErr(problems []error) error {
	if len(problems) == 1 {
		return problems[0]
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = "  " + p.Error()
	}
	return usageErr("%d agents cannot start:\n%s", len(problems), strings.Join(lines, "\n"))
}

func modelName(a config.Agent) string {
	if a.Backend.Type == "sim" {
		return simModel(a)
	}
	return a.Backend.Model
}

// buildModel makes the llm.Model for one agent through the provider
// registered for its backend type, and returns the request parameters its
// provider prepared and the endpoint it talks to.
func buildModel(a config.Agent, getenv func(string) string, sims map[string]string) (llm.Model, map[string]any, string, error) {
	b := a.Backend
	// The verdict config validation gives, for teams built in code too.
	if vd := provider.Judge(b.Type, b.Model, b.BaseURL); !vd.OK() {
		return nil, nil, "", usageErr("agent %s: %s", a.ID, vd)
	}
	spec, _ := provider.Lookup(b.Type)
	p, ok := llm.LookupProvider(b.Type)
	if !ok {
		return nil, nil, "", execErr("agent %s: no provider for backend type %q is linked into this program%s", a.ID, b.Type, linkHint(spec.Wire))
	}
	lb := llm.Backend{Type: b.Type, Model: modelName(a), APIKey: b.APIKey, Stream: b.Stream, Params: requestParams(b), Getenv: getenv,
		// The environment override wins over the config: it is this run's choice.
		BaseURL: cmp.Or(baseURLOverride(b.Type, getenv), b.BaseURL, spec.BaseURL)}
	if b.Type == "sim" {
		lb.BaseURL = sims[simKey(a)] // the simulator this team started for it
	}
	if p.Prepare != nil {
		if err := p.Prepare(&lb); err != nil {
			return nil, nil, "", usageErr("agent %s: %v", a.ID, err)
		}
	}
	if lb.BaseURL == "" {
		return nil, nil, "", usageErr("agent %s: backend %s needs base_url (the endpoint of the OpenAI-compatible server)", a.ID, b.Type)
	}
	if b.APIKeyUnsetVar != "" {
		// The config named its key; another one must not be billed instead.
		return nil, nil, "", usageErr("agent %s: api_key refers to %s, which is not set: set it (in the environment or a .env file); "+
			"massgen does not fall back to another key", a.ID, b.APIKeyUnsetVar)
	}
	vars := provider.KeyEnv(b.Type, b.BaseURL)
	for _, v := range vars {
		if lb.APIKey == "" {
			lb.APIKey = getenv(v)
		}
	}
	registerSecrets(lb.APIKey, getenv)
	if lb.APIKey == "" && len(vars) > 0 && !isLocal(lb.BaseURL) {
		return nil, nil, "", usageErr("%s: backend %s needs an API key: set %s (in the environment or a .env file), or api_key in the config",
			coord.AgentRef(a.ID), b.Type, strings.Join(vars, " or "))
	}
	return p.New(lb), lb.Params, lb.BaseURL, nil
}

// registerSecrets makes the key an agent resolved, and every key variable
// of the provider catalogue that is set, masked in all error text of this
// process (see package redact): a provider that echoes a key, its own or
// another agent's, must not put it in a log, an event or a server response.
func registerSecrets(key string, getenv func(string) string) {
	redact.Secret(key)
	for _, typ := range provider.Names() {
		s, _ := provider.Lookup(typ)
		for _, v := range s.KeyEnv {
			redact.Secret(getenv(v))
		}
	}
}

// baseURLOverride reads MASSGEN_<TYPE>_BASE_URL, so a whole config can be
// pointed at a local gateway (or the simulator) without editing it.
func baseURLOverride(typ string, getenv func(string) string) string {
	return getenv("MASSGEN_" + strings.ToUpper(typ) + "_BASE_URL")
}

func isLocal(url string) bool {
	return strings.Contains(url, "://localhost") || strings.Contains(url, "://127.0.0.1") || strings.Contains(url, "://[::1]")
}

// requestParams are the request parameters of a backend before its
// provider prepares them: its pass-through keys plus the built-in tool
// flags its type supports (the adapters turn them into provider-side tools).
func requestParams(b config.Backend) map[string]any {
	spec, _ := provider.Lookup(b.Type)
	out := maps.Clone(b.Params)
	if out == nil {
		out = map[string]any{}
	}
	for _, flag := range spec.Builtins {
		if on, _ := b.Extra[flag].(bool); on {
			out[flag] = true
		}
	}
	return out
}

// linkHint names the package a Go program imports to link the provider of
// a wire API (a program links only the providers it imports; see
// providers/).
func linkHint(w provider.Wire) string {
	pkg := map[provider.Wire]string{
		provider.WireChat: "chatcompat", provider.WireSim: "chatcompat", provider.WireResponses: "openai",
		provider.WireAnthropic: "anthropic", provider.WireGemini: "gemini",
	}[w]
	if pkg == "" {
		return ""
	}
	return fmt.Sprintf(`: import _ "github.com/massgen/massgen/providers/%s" (or providers/all)`, pkg)
}
