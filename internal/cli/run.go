package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/runlog"
)

// Request is one run as the CLI flags (or the public Go API) describe it.
type Request struct {
	Question      string
	Config        string // file or @examples/NAME; "" = discovery
	Model         string // quick single agent
	Backend       string
	BaseURL       string
	SystemMessage string
	Timeout       float64 // seconds; 0 = the config's
	NoLogs        bool
	LogDir        string
	Debug         bool
	Automation    bool
	Args          []string // command line, recorded in execution_metadata.yaml
	// History and ClientTools come from API clients (massgen serve): the
	// earlier turns of the conversation, and the client's own tools.
	History     []llm.Message
	ClientTools []llm.ToolDef
	// Params are provider parameters for every agent's requests, over the
	// config's (massgen serve: a client's sampling parameters for a
	// single-model run).
	Params map[string]any
	// Observe, when set, is called once the team is built, with a
	// subscription to the run's events (the display uses it) and the log
	// directory ("" without logs). It must consume the subscription until
	// it ends.
	Observe func(sub *event.Subscription, agents []orchestrator.Agent, logDir string)
	// ObserveSkips are the event types Observe's subscription leaves out.
	ObserveSkips []event.Type

	prepare preparer // nil: prepareFresh
}

// Outcome is what Execute produced.
type Outcome struct {
	*orchestrator.Result
	LogDir     string
	AnswerFile string
}

// Execute is the main job without any printing: resolve the config, build
// the team, run the orchestration with logs. Errors before the run starts
// carry their exit code; the run's own outcome is in Outcome.Status.
func Execute(ctx context.Context, env *Env, rq Request) (*Outcome, error) {
	if env.WorkDir == "" {
		env.WorkDir, _ = os.Getwd()
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	getenv := env.Getenv
	if !env.DotEnvLoaded {
		var err error
		if getenv, err = loadEnv(env); err != nil {
			return nil, err
		}
	}
	if rq.Timeout < 0 {
		return nil, usageErr("--orchestrator-timeout must be a positive number of seconds")
	}
	prepare := rq.prepare
	if prepare == nil {
		prepare = prepareFresh
	}
	p, release, err := prepare(env, &rq, getenv)
	if err != nil {
		return nil, err
	}
	defer release()
	cfg, t := p.cfg, p.team
	agents := withParams(t.agents, rq.Params)
	if rq.Timeout > 0 {
		c := *cfg // p may be shared by concurrent runs
		c.Orchestrator.TimeoutSeconds = rq.Timeout
		cfg = &c
	}
	level, logOut := slog.LevelInfo, io.Discard
	if rq.Debug {
		level, logOut = slog.LevelDebug, env.Stderr
	}
	broker := event.NewBroker()
	var logs *runlog.Writer
	if !rq.NoLogs && (cfg.UI.LoggingEnabled || rq.Debug || rq.Automation) {
		root := rq.LogDir
		if root == "" {
			root = filepath.Join(env.WorkDir, ".massgen", "massgen_logs")
		}
		if logs, err = runlog.New(root, env.Now(), metadata(cfg, rq)); err != nil {
			return nil, &exitError{code: ExitExecution, err: fmt.Errorf("cannot create the log directory: %w", err)}
		}
		logOut = io.MultiWriter(logOut, logs.LogWriter())
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	for _, n := range t.notes {
		log.Info(n)
	}
	ctx = withRunLog(ctx, log)

	out := &Outcome{}
	var wg sync.WaitGroup
	if logs != nil {
		out.LogDir = logs.Dir()
		sub := broker.Subscribe()
		// The log writer ends when the broker closes, not when ctx does, so
		// an interrupted run still records its final events.
		wg.Go(func() { logs.Run(context.WithoutCancel(ctx), sub) })
	}
	if logs != nil || rq.Debug {
		sub := broker.Subscribe(event.Deltas...)
		wg.Go(func() { logEvents(log, sub) })
	}
	if rq.Observe != nil {
		sub := broker.Subscribe(rq.ObserveSkips...)
		wg.Go(func() { rq.Observe(sub, agents, out.LogDir) })
	}
	o := cfg.Orchestrator
	out.Result = orchestrator.Run(ctx, rq.Question, orchestrator.Options{
		Agents:               agents,
		VotingSensitivity:    o.VotingSensitivity,
		Novelty:              o.AnswerNovelty,
		MaxAnswers:           o.MaxNewAnswersPerAgent,
		Inject:               o.RestartPolicy == "inject",
		DependentFirstAnswer: !o.IndependentFirstAnswer,
		Eager:                !o.WaitForFirstAnswers,
		FailureBudget:        o.FailureBudget,
		Timeout:              seconds(o.TimeoutSeconds),
		TurnTimeout:          seconds(o.AgentTurnTimeoutSeconds),
		MaxRestarts:          o.MaxOrchestrationRestarts,
		Presentation:         presentation(cfg.UI.EnableFinalPresentation),
		Direct:               !cfg.UI.UseOrchestratorForSingleAgent,
		MaxCostUSD:           o.MaxCostUSD,
		MaxTokens:            o.MaxTotalTokens,
		History:              rq.History,
		ClientTools:          rq.ClientTools,
		Events:               broker,
		Now:                  env.Now,
	})
	broker.Close()
	wg.Wait()
	if logs != nil {
		if err := logs.Close(); err != nil {
			fmt.Fprintf(env.Stderr, "warning: writing logs: %v\n", err)
		}
		out.AnswerFile = logs.AnswerFile()
	}
	return out, nil
}

// withParams returns agents whose requests also carry params (which win
// over the agents' own); agents is left as it is, since a team may be
// shared by concurrent runs.
func withParams(agents []orchestrator.Agent, params map[string]any) []orchestrator.Agent {
	if len(params) == 0 {
		return agents
	}
	out := slices.Clone(agents)
	for i := range out {
		merged := maps.Clone(out[i].Params)
		if merged == nil {
			merged = map[string]any{}
		}
		maps.Copy(merged, params)
		out[i].Params = merged
	}
	return out
}

// prepared is what a run needs before it starts: its config and its team.
type prepared struct {
	cfg  *config.Config
	team *team
}

// preparer resolves the config of rq and builds its team, printing the
// warnings of both; release is called when the run has ended. The CLI
// prepares afresh for every run (prepareFresh); massgen serve reuses one
// team per config (teamCache).
type preparer func(env *Env, rq *Request, getenv func(string) string) (p *prepared, release func(), err error)

func prepareFresh(env *Env, rq *Request, getenv func(string) string) (*prepared, func(), error) {
	cfg, err := resolveConfig(env, rq, getenv)
	if err != nil {
		return nil, nil, err
	}
	printWarnings(env.Stderr, cfg.Warnings)
	t, err := buildTeam(cfg, getenv)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range t.warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	return &prepared{cfg: cfg, team: t}, t.Close, nil
}

type runLogKey struct{}

// withRunLog makes log the logger of the run ctx belongs to: shared models
// report retries into it (runLog).
func withRunLog(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, runLogKey{}, log)
}

var discardLog = slog.New(slog.DiscardHandler)

// runLog is the logger of the run ctx belongs to, or one that discards.
func runLog(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(runLogKey{}).(*slog.Logger); ok {
		return l
	}
	return discardLog
}

// presentation maps ui.enable_final_presentation to the orchestrator's
// choice: unset leaves it to the team's size.
func presentation(enable *bool) orchestrator.Presentation {
	switch {
	case enable == nil:
		return orchestrator.PresentAuto
	case *enable:
		return orchestrator.PresentAlways
	}
	return orchestrator.PresentNever
}

// runQuestion is the CLI's main job: Execute with a display, then print
// the answer and map the outcome to an exit code.
func runQuestion(ctx context.Context, env *Env, rq Request, outputFile string) error {
	rq.Observe = func(sub *event.Subscription, _ []orchestrator.Agent, logDir string) {
		d := newDisplay(env, rq.Automation)
		if logDir != "" {
			d.logDir(logDir)
		}
		d.run(sub)
	}
	rq.ObserveSkips = append(slices.Clone(event.Deltas), event.Bookkeeping...) // progress lines: no streamed text, no accounting
	out, err := Execute(ctx, env, rq)
	if err != nil {
		return err
	}
	return finish(env, rq.Automation, outputFile, out)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// finish prints the outcome and maps it to an exit code.
func finish(env *Env, automation bool, outputFile string, out *Outcome) error {
	res, answerFile := out.Result, out.AnswerFile
	if res.Status == orchestrator.Completed && outputFile != "" {
		p := outputFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.WorkDir, p)
		}
		if err := os.WriteFile(p, []byte(res.Final+"\n"), 0o644); err != nil {
			return &exitError{code: ExitExecution, err: fmt.Errorf("cannot write --output-file: %w", err)}
		}
	}
	if automation {
		if res.Winner != "" {
			fmt.Fprintf(env.Stdout, "WINNER: %s\n", res.Winner)
		}
		if answerFile != "" {
			fmt.Fprintf(env.Stdout, "ANSWER_FILE: %s\n", answerFile)
		}
		fmt.Fprintf(env.Stdout, "DURATION: %.1fs\n", res.Duration.Seconds())
		fmt.Fprintf(env.Stdout, "COST_USD: %.6f\n", res.TotalCost())
		fmt.Fprintf(env.Stdout, "RESULT: %s\n", res.Status)
		if res.Status == orchestrator.Completed {
			fmt.Fprintf(env.Stdout, "COMPLETED: %d agents, %.1fs total\n", len(res.Usage), res.Duration.Seconds())
		}
	} else {
		if res.Status == orchestrator.Completed {
			fmt.Fprintln(env.Stdout, res.Final)
		}
		printUsage(env.Stderr, res)
	}
	switch res.Status {
	case orchestrator.Completed:
		return nil
	case orchestrator.TimedOut:
		return &exitError{code: ExitTimeout, err: res.Err}
	case orchestrator.Interrupted:
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted; partial answers are kept in the log directory")}
	default:
		return &exitError{code: ExitExecution, err: res.Err}
	}
}

func metadata(cfg *config.Config, rq Request) runlog.Metadata {
	m := runlog.Metadata{Question: rq.Question, ConfigPath: cfg.Path, ConfigRaw: cfg.Raw, Version: Version,
		Attempts: cfg.Orchestrator.MaxOrchestrationRestarts > 0, CLIArgs: rq.Args}
	for _, a := range cfg.Agents {
		m.Agents = append(m.Agents, runlog.AgentInfo{ID: a.ID, Backend: a.Backend.Type, Model: modelName(a), Simulated: a.Backend.Type == "sim"})
	}
	return m
}

// logEvents writes every coordination event to massgen.log, and to stderr
// with --debug; its subscription leaves out the streamed deltas. The
// message is event.Describe's sentence; the attributes name the event and
// its labels as coordination_events.json does.
func logEvents(log *slog.Logger, sub *event.Subscription) {
	for {
		e, ok := sub.Next(nil)
		if !ok {
			return
		}
		r := event.ToRecord(e)
		attrs := []any{"event", string(r.Type), "seq", r.Seq, "attempt", r.Attempt, "epoch", r.Epoch}
		for _, kv := range [][2]string{{"agent", r.Agent}, {"label", r.Label}, {"anon_label", r.AnonLabel}, {"target", r.Target},
			{"target_answer", r.TargetAnswer}, {"status", r.Status}, {"error", r.Err}} {
			if kv[1] != "" {
				attrs = append(attrs, kv[0], kv[1])
			}
		}
		if r.InputTokens+r.OutputTokens > 0 {
			attrs = append(attrs, "input_tokens", r.InputTokens, "output_tokens", r.OutputTokens)
		}
		level := slog.LevelInfo
		if e.Type() == event.TypeTurnStarted || slices.Contains(event.Bookkeeping, e.Type()) {
			level = slog.LevelDebug
		}
		// The record keeps the event's own time, not the time it was logged.
		if h := log.Handler(); h.Enabled(context.Background(), level) {
			rec := slog.NewRecord(r.Time, level, event.Describe(e), 0)
			rec.Add(attrs...)
			_ = h.Handle(context.Background(), rec)
		}
	}
}

// printWarnings shows each distinct config warning once, with a count of its
// repetitions: a fifty-agent config should not print fifty identical lines.
// `massgen config validate` lists every one.
func printWarnings(w io.Writer, ds []config.Diagnostic) {
	seen := map[string]int{}
	var order []config.Diagnostic
	for _, d := range ds {
		if seen[d.Message]++; seen[d.Message] == 1 {
			order = append(order, d)
		}
	}
	for _, d := range order {
		more := ""
		if n := seen[d.Message] - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more like it)", n)
		}
		fmt.Fprintf(w, "%s%s\n", d, more)
	}
}

// printUsage ends plain output with what the run spent, per agent.
func printUsage(w io.Writer, res *orchestrator.Result) {
	ids := make([]string, 0, len(res.Usage))
	for id := range res.Usage {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		u := res.Usage[id]
		parts = append(parts, fmt.Sprintf("%s %d/%d $%.4f", id, u.InputTokens, u.OutputTokens, res.Cost[id]))
	}
	total := res.TotalUsage()
	fmt.Fprintf(w, "usage: %d input + %d output tokens, $%.4f in %.1fs (%s)\n",
		total.InputTokens, total.OutputTokens, res.TotalCost(), res.Duration.Seconds(), strings.Join(parts, ", "))
}
