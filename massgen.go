// Package massgen runs a team of LLM agents that answer the same question in
// parallel, refine each other's answers and vote; the answer the team
// converges on is returned. It is the Go equivalent of Python's
// `massgen.run`, and reads MassGen's YAML configs unchanged.
//
//	res, err := massgen.Run(ctx, "What is the capital of France?", massgen.Options{
//		Config: "@examples/sim_three_agents", // or a path to a MassGen YAML file
//	})
//	if err != nil { … }            // config or setup problem
//	fmt.Println(res.Status, res.Answer)
//
// The team can also be given as a value: MassGen YAML in memory
// (Options.ConfigYAML) or agents described in code (Options.Agents). Stream
// runs the same way and yields the run's events while it goes.
//
// This package is a thin face over internal/app, which the command-line
// tool (cmd/massgen) and `massgen serve` use too. It links neither the
// command line nor the HTTP server.
package massgen

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/provider"
)

// Options choose the team and where the run keeps its logs.
type Options struct {
	// The team, given one way at most. Config is a MassGen YAML/JSON file or
	// "@examples/NAME"; ConfigYAML is the same given as a value; Agents is a
	// team described in code (the orchestrator's settings are MassGen's
	// defaults); Model runs a single agent on this model (backend inferred,
	// or Backend). None of them: ./.massgen/config.yaml,
	// ~/.config/massgen/config.yaml, else a team built from the API keys
	// found in the environment.
	Config                                 string
	ConfigYAML                             []byte
	Agents                                 []AgentSpec
	Model, Backend, BaseURL, SystemMessage string
	// Models is a team of these models, one agent each, named after its
	// model — upstream's massgen.run(models=[…]): "gpt-4o-mini",
	// "claude-sonnet-4-5", "groq/llama-3.3-70b-versatile" (the backend is
	// inferred from each name, or taken from its "provider/" prefix).
	Models []string
	// History holds the earlier turns of a conversation, oldest first;
	// every agent sees them before the question.
	History []Message
	// Timeout overrides the config's whole-run timeout.
	Timeout time.Duration
	// NoLogs skips the log directory; LogDir changes its root
	// (default ./.massgen/massgen_logs).
	NoLogs bool
	LogDir string
	// Getenv reads the environment (default os.Getenv); .env files are read too.
	Getenv func(string) string
	// WorkDir is where relative paths resolve (default the current directory).
	WorkDir string
	// Warnings receives the run's warnings as lines, "warning: …"
	// (default discarded); they are also Result.Warnings, and EventWarning
	// events for OnEvent.
	Warnings io.Writer
	// OnEvent, when set, is called with each event of the run as it
	// happens, in order, from one goroutine. The streamed-text events
	// (text_delta, reasoning_delta, final_delta) may be skipped when OnEvent
	// is slow; every other event is delivered. The run does not wait for
	// OnEvent, but Run returns only once it has seen the last event.
	OnEvent func(Event)
}

// AgentSpec describes one agent of a team given in code.
type AgentSpec struct {
	ID string
	// Backend is the backend type: openai, claude, gemini, grok,
	// chatcompletion, groq, openrouter, sim, … ("" infers it from Model).
	Backend string
	Model   string
	BaseURL string // for compatible endpoints; "" uses the backend's own
	APIKey  string // "" reads the backend's variable (OPENAI_API_KEY, …)
	// SystemMessage is the agent's own instructions.
	SystemMessage string
	// Params are provider parameters sent with every request
	// (temperature, max_tokens, reasoning, …), as a config's backend keys.
	Params map[string]any
}

// Message is one earlier turn of a conversation.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Status is how a run ended.
type Status = orchestrator.Status

// The ways a run ends.
const (
	Completed   = orchestrator.Completed   // a final answer was produced
	TimedOut    = orchestrator.TimedOut    // the deadline passed with no answer at all
	Failed      = orchestrator.Failed      // every agent failed
	Interrupted = orchestrator.Interrupted // the context was cancelled
)

// Usage counts the tokens of an agent's requests.
type Usage = llm.Usage

// Failure is why an agent's turn or call failed, as data: its Kind (auth,
// quota, rate_limit, stall, timeout, circuit_open, bad_request, provider,
// tool, protocol, cancelled, other), the agent, provider, model and HTTP
// status, and whether trying again may help. Events, Result.Failures and
// RunError carry it; its predicates (IsAuth, IsRateLimit, IsTimeout,
// IsRetryable) answer the usual questions.
type Failure = coord.Failure

// FailureKind classifies a Failure.
type FailureKind = coord.FailureKind

// The kinds of failure.
const (
	FailAuth        = coord.FailAuth
	FailQuota       = coord.FailQuota
	FailRateLimit   = coord.FailRateLimit
	FailStall       = coord.FailStall
	FailTimeout     = coord.FailTimeout
	FailCircuitOpen = coord.FailCircuitOpen
	FailBadRequest  = coord.FailBadRequest
	FailProvider    = coord.FailProvider
	FailTool        = coord.FailTool
	FailProtocol    = coord.FailProtocol
	FailCancelled   = coord.FailCancelled
	FailOther       = coord.FailOther
)

// RunError is Result.Err of a run that did not complete: its Status, the
// reason, and the Failures that made the agents leave. Get it with
// errors.AsType[*massgen.RunError](res.Err).
type RunError = orchestrator.RunError

// Error is the error Run returns for a problem before the run starts; its
// Kind says whose move it is (ConfigError: change the config or the
// options; ExecutionError: the machine failed, e.g. no log directory).
type Error = app.Error

// ErrorKind is an Error's Kind.
type ErrorKind = app.Kind

// The kinds of Error.
const (
	ConfigError    = app.KindConfig
	ExecutionError = app.KindExecution
)

// Result is what a run produced.
type Result struct {
	Status   Status
	Answer   string         // the final answer ("" unless completed)
	Winner   string         // id of the agent whose answer won
	How      string         // how the winner was chosen
	Votes    map[string]int // votes per agent id in the final round
	Usage    map[string]Usage
	CostUSD  float64 // the whole run, priced from the model catalogue
	Duration time.Duration
	LogDir   string // "" with NoLogs
	Err      error  // why the run did not complete, if it did not (a *RunError)
	// Failures are why the agents of a failed run left, as data: the last
	// failure of each agent that had one, in config order.
	Failures []Failure

	// Fallback says why Answer is the winner's stored answer rather than
	// its final presentation ("" when the presentation made it): the
	// presentation failed, came back empty, or — GraceExpired — did not end
	// by the run deadline plus the presentation grace.
	Fallback     string
	GraceExpired bool
	// Warnings are the run's warnings, as lines ("warning: …"): what it did
	// not do as asked, or could not keep.
	Warnings []string
}

// Run coordinates the team on question. The error is for problems before
// the run starts (bad config, missing API key; an *Error); how the run
// itself ended is in Result.Status, Result.Err and Result.Failures.
func Run(ctx context.Context, question string, o Options) (*Result, error) {
	hist, err := history(o.History)
	if err != nil {
		return nil, err
	}
	env := &app.Env{Getenv: o.Getenv, Stderr: o.Warnings, WorkDir: o.WorkDir}
	env.WithDefaults()
	team := agents(o.Agents)
	if len(o.Models) > 0 {
		if len(o.Agents) > 0 {
			return nil, &app.Error{Kind: app.KindConfig, Err: fmt.Errorf("give the team as Agents or as Models, not both")}
		}
		if team, err = app.ModelAgents(o.Models, env.Getenv); err != nil {
			return nil, err
		}
	}
	rq := app.Request{
		Question: question,
		Team: app.Team{
			Config:        o.Config,
			ConfigYAML:    o.ConfigYAML,
			Agents:        team,
			Model:         o.Model,
			Backend:       o.Backend,
			BaseURL:       o.BaseURL,
			SystemMessage: o.SystemMessage,
		},
		Overrides: app.Overrides{Timeout: o.Timeout.Seconds()},
		Client:    app.Client{History: hist},
		Logging: app.Logging{
			NoLogs: o.NoLogs,
			LogDir: o.LogDir,
		},
	}
	if o.OnEvent != nil {
		rq.Observe = func(sub *event.Subscription, info app.RunInfo) {
			for {
				e, ok := sub.Next(nil)
				if !ok {
					return
				}
				if w, ok := e.(event.Warning); ok && o.Warnings != nil {
					fmt.Fprintln(o.Warnings, w.Line())
				}
				o.OnEvent(eventFrom(e))
			}
		}
	}
	out, err := app.Execute(ctx, env, rq)
	if err != nil {
		return nil, err
	}
	r := out.Result
	return &Result{Status: r.Status, Answer: r.Final, Winner: r.Winner, How: r.How, Fallback: r.Fallback, GraceExpired: r.GraceExpired,
		Votes: r.Tally, Usage: r.Usage, CostUSD: r.TotalCost(), Duration: r.Duration, LogDir: out.LogDir, Err: r.Err,
		Failures: r.Failures, Warnings: out.Warnings}, nil
}

// agents turns a team given in code into config agents, as the YAML
// decoder would: the backend type is inferred from the model when absent.
func agents(specs []AgentSpec) []config.Agent {
	var out []config.Agent
	for _, s := range specs {
		b := config.Backend{Type: s.Backend, Model: s.Model, BaseURL: s.BaseURL, APIKey: s.APIKey, Stream: true, Params: s.Params}
		if b.Type == "" {
			b.Type = provider.InferType(s.Model)
		}
		if b.Type == "sim" {
			b.Sim = &config.SimBackend{}
		}
		out = append(out, config.Agent{ID: s.ID, SystemMessage: s.SystemMessage, Backend: b})
	}
	return out
}

func history(ms []Message) ([]llm.Message, error) {
	var out []llm.Message
	for i, m := range ms {
		if r := llm.Role(m.Role); r != llm.RoleUser && r != llm.RoleAssistant {
			return nil, &app.Error{Kind: app.KindConfig, Err: fmt.Errorf("History[%d]: role %q, want \"user\" or \"assistant\"", i, m.Role)}
		}
		out = append(out, llm.Message{Role: llm.Role(m.Role), Content: m.Content})
	}
	return out, nil
}
