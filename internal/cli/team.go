package cli

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/anthropic"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llm/gemini"
	"github.com/massgen/massgen/internal/llm/openai"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/provider"
)

// team is a ready-to-run set of agents plus what must be stopped afterwards.
// Its models are safe to share: massgen serve runs many requests on one
// team, so that they share its rate limiters and circuit breakers too.
type team struct {
	agents   []orchestrator.Agent
	guards   *llm.Guards // the agents' circuit breakers and rate limiters
	sims     []*llmsim.Server
	warnings []string // for the user, once
	notes    []string // for each run's log
}

func (t *team) Close() {
	for _, s := range t.sims {
		s.Close()
	}
}

// buildTeam turns config agents into orchestrator agents: it resolves API
// keys and base URLs, starts the in-process simulator for `type: sim`, and
// wraps every model in the shared retry policy. It fails before any request
// is made when a key is missing, naming the variable to set. Retries are
// logged to the logger of the run that made the request (runLog).
func buildTeam(cfg *config.Config, getenv func(string) string) (*team, error) {
	t := &team{}
	sims := map[string]string{} // scenario path → base URL
	var simScripts = map[string]*llmsim.Scenario{}
	// The simulator is shared by the agents that use the same scenario; the
	// per-agent latency settings become per-model entries of that scenario.
	for _, a := range cfg.Agents {
		if a.Backend.Type != "sim" {
			continue
		}
		key := simKey(a)
		sc := simScripts[key]
		if sc == nil {
			var err error
			if sc, err = loadScenario(key, a.Backend.Sim); err != nil {
				t.Close()
				return nil, usageErr("agent %s: %v", a.ID, err)
			}
			simScripts[key] = sc
		}
		if s := a.Backend.Sim; s != nil && (s.TTFTMillis > 0 || s.TokensPerSecond > 0) {
			ms := sc.Models[simModel(a)]
			if s.TTFTMillis > 0 {
				ms.TTFTMillis = &s.TTFTMillis
			}
			if s.TokensPerSecond > 0 {
				ms.TokensPerSecond = &s.TokensPerSecond
			}
			sc.Models[simModel(a)] = ms
		}
	}
	for key, sc := range simScripts {
		srv := llmsim.New(sc)
		// Nobody reads this simulator's request log: keep it small, as a
		// team may serve requests for as long as massgen serve runs.
		srv.DropMessages()
		srv.KeepRequests(256)
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			t.Close()
			return nil, &exitError{code: ExitExecution, err: fmt.Errorf("cannot start the simulator: %w", err)}
		}
		t.sims = append(t.sims, srv)
		sims[key] = url
	}
	// One breaker and one rate limiter per endpoint and model, shared by
	// the agents that use them.
	t.guards = &llm.Guards{IdleTimeout: seconds(cfg.Orchestrator.StreamIdleTimeoutSeconds)}
	for _, a := range cfg.Agents {
		m, endpoint, err := buildModel(a, getenv, sims)
		if err != nil {
			t.Close()
			return nil, err
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
			if near := provider.SuggestModel(modelName(a), getenv); near != "" {
				t.warnings = append(t.warnings, fmt.Sprintf("agent %s: model %q is not in the model catalogue — did you mean %q? (its cost is not counted)", a.ID, modelName(a), near))
			}
		}
		m = t.guards.Wrap(m, llm.Route{Provider: a.Backend.Type, Endpoint: endpoint, Model: modelName(a),
			RequestsPerMinute: a.Backend.RequestsPerMinute, TokensPerMinute: a.Backend.TokensPerMinute}, retries)
		t.agents = append(t.agents, orchestrator.Agent{
			ID: a.ID, Backend: a.Backend.Type, ModelName: modelName(a), Model: m,
			Params: providerParams(a.Backend), SystemMessage: a.SystemMessage, Simulated: a.Backend.Type == "sim", Cost: cost,
		})
	}
	return t, nil
}

// simKey names the simulator an agent runs on: one per scenario file, one
// per agent with an inline scenario, one shared by all the rest.
func simKey(a config.Agent) string {
	if a.Backend.Sim != nil && a.Backend.Sim.Inline != nil {
		return "inline:" + a.ID
	}
	if a.Backend.Sim == nil || a.Backend.Sim.Scenario == "" {
		return ""
	}
	return a.Backend.Sim.Scenario // config resolved it against the config file's directory
}

func loadScenario(key string, sim *config.SimBackend) (*llmsim.Scenario, error) {
	var sc *llmsim.Scenario
	var err error
	switch {
	case key == "":
		return &llmsim.Scenario{Models: map[string]llmsim.ModelScript{}}, nil
	case strings.HasPrefix(key, "inline:"):
		var data []byte
		if data, err = yaml.Marshal(sim.Inline); err == nil {
			sc, err = llmsim.ParseScenario(data)
		}
		if err != nil {
			err = fmt.Errorf("inline scenario: %w", err)
		}
	default:
		sc, err = llmsim.LoadScenario(key)
	}
	if err != nil {
		return nil, err
	}
	if sc.Models == nil {
		sc.Models = map[string]llmsim.ModelScript{}
	}
	return sc, nil
}

func simModel(a config.Agent) string { return cmp.Or(a.Backend.Model, "sim") }

func modelName(a config.Agent) string {
	if a.Backend.Type == "sim" {
		return simModel(a)
	}
	return a.Backend.Model
}

// buildModel makes the llm.Model for one agent, and names its endpoint.
func buildModel(a config.Agent, getenv func(string) string, sims map[string]string) (llm.Model, string, error) {
	b := a.Backend
	spec, ok := provider.Lookup(b.Type)
	if !ok {
		return nil, "", usageErr("agent %s: unknown backend type %q%s", a.ID, b.Type, suggestType(b.Type))
	}
	if b.Type == "sim" {
		url := sims[simKey(a)]
		return chatcompat.New(chatcompat.Options{Provider: "sim", BaseURL: url, APIKey: "sim", Model: simModel(a), Stream: b.Stream}), url, nil
	}
	if !spec.Native {
		return nil, "", usageErr("agent %s: backend type %q is recognised but not supported by this version yet; "+
			"use an OpenAI-compatible type (openai, claude, gemini, grok, groq, openrouter, chatcompletion with base_url, …)", a.ID, b.Type)
	}
	// The environment override wins over the config: it is this run's choice.
	base := cmp.Or(baseURLOverride(b.Type, getenv), b.BaseURL, spec.BaseURL)
	if b.Type == "azure_openai" {
		endpoint, _ := b.Params["azure_endpoint"].(string)
		base = azureBase(cmp.Or(base, endpoint, getenv("AZURE_OPENAI_ENDPOINT")))
		if base == "" {
			return nil, "", usageErr("agent %s: backend azure_openai needs its endpoint: set AZURE_OPENAI_ENDPOINT "+
				"(https://<resource>.openai.azure.com), or base_url in the config", a.ID)
		}
	}
	if base == "" {
		return nil, "", usageErr("agent %s: backend %s needs base_url (the endpoint of the OpenAI-compatible server)", a.ID, b.Type)
	}
	key := b.APIKey
	vars := provider.KeyEnv(b.Type, b.BaseURL)
	for _, v := range vars {
		if key == "" {
			key = getenv(v)
		}
	}
	if key == "" && len(vars) > 0 && !isLocal(base) {
		return nil, "", usageErr("agent %s: backend %s needs an API key: set %s (in the environment or a .env file), or api_key in the config",
			a.ID, b.Type, strings.Join(vars, " or "))
	}
	return newModel(spec.Wire, b, base, key), base, nil
}

// azureBase turns an Azure OpenAI resource endpoint into the base URL of its
// OpenAI-compatible v1 API. A URL that already has a path (a gateway, the
// simulator, or .../openai/v1 itself) is used as given.
func azureBase(endpoint string) string {
	if endpoint == "" {
		return ""
	}
	u, err := url.Parse(endpoint)
	if err != nil || strings.Trim(u.Path, "/") != "" {
		return strings.TrimRight(endpoint, "/")
	}
	return strings.TrimRight(endpoint, "/") + "/openai/v1"
}

// newModel picks the adapter for a wire API. Each adapter package speaks one
// API on its official SDK; adding a provider of an existing wire is a line
// in internal/provider, adding a wire is a case here.
func newModel(wire provider.Wire, b config.Backend, base, key string) llm.Model {
	switch wire {
	case provider.WireResponses:
		return openai.New(openai.Options{Provider: b.Type, BaseURL: base, APIKey: key, Model: b.Model})
	case provider.WireAnthropic:
		return anthropic.New(anthropic.Options{Provider: b.Type, BaseURL: base, APIKey: key, Model: b.Model})
	case provider.WireGemini:
		return gemini.New(gemini.Options{Provider: b.Type, BaseURL: base, APIKey: key, Model: b.Model})
	}
	var headers map[string]string
	if b.Type == "azure_openai" {
		headers = map[string]string{"api-key": key} // Azure's own header; its v1 API takes the bearer too
	}
	return chatcompat.New(chatcompat.Options{Provider: b.Type, BaseURL: base, APIKey: cmp.Or(key, "none"), Model: b.Model, Stream: b.Stream, Headers: headers})
}

// baseURLOverride reads MASSGEN_<TYPE>_BASE_URL, so a whole config can be
// pointed at a local gateway (or the simulator) without editing it.
func baseURLOverride(typ string, getenv func(string) string) string {
	return getenv("MASSGEN_" + strings.ToUpper(typ) + "_BASE_URL")
}

func isLocal(url string) bool {
	return strings.Contains(url, "://localhost") || strings.Contains(url, "://127.0.0.1") || strings.Contains(url, "://[::1]")
}

// providerParams are the request parameters of a backend: its pass-through
// keys plus the built-in tool flags its provider supports (the adapters turn
// them into provider-side tools; Grok takes them as Live Search).
func providerParams(b config.Backend) map[string]any {
	spec, _ := provider.Lookup(b.Type)
	out := map[string]any{}
	for k, v := range b.Params {
		out[k] = v
	}
	if b.Type == "azure_openai" {
		// Connection settings, not request parameters. The v1 API has no
		// api-version; the key is accepted and ignored.
		delete(out, "azure_endpoint")
		delete(out, "api_version")
	}
	for _, flag := range spec.Builtins {
		if on, _ := b.Extra[flag].(bool); !on {
			continue
		}
		if b.Type == "grok" {
			if _, set := out["search_parameters"]; !set {
				out["search_parameters"] = map[string]any{"mode": "auto"}
			}
			continue
		}
		out[flag] = true
	}
	return out
}
