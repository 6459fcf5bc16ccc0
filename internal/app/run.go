package app

import (
	"cmp"
	"context"

	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"

	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/runlog"
	"github.com/massgen/massgen/internal/telemetry"
)

// RunInfo is what Observe learns about a run as it starts.
type RunInfo struct {
	Agents  []orchestrator.Agent
	LogDir  string        // "" without logs
	Timeout time.Duration // the whole-run deadline after its start
	// Events is the run's broker: more subscribers may join it, from any
	// sequence number (a client that reconnects), during the run and
	// after it has ended.
	Events *event.Broker
}

// Outcome is what Execute produced.
type Outcome struct {
	*orchestrator.Result
	LogDir     string
	AnswerFile string
	// IgnoredFeatures are the config's settings this run did not act on
	// (config.Config.IgnoredFeatures).
	IgnoredFeatures []string
	// Workspace is the winner's workspace directory, when it has one; the
	// log directory keeps a copy in final/<winner>/workspace/.
	Workspace string
	// ContextChanges list what the winner changed in its write context
	// paths during the final presentation ("modified /p/main.go"), then
	// where the originals were kept.
	ContextChanges []string
	// LogsIncomplete, when set, says which files of the log directory could
	// not be written whole (a full disk) — also on stderr and in
	// status.json. The run and its answer are not affected.
	LogsIncomplete string
	// Warnings are the run's warnings as lines ("warning: …"), each also
	// an event.Warning of the run; LateWarnings, the last of them, came
	// after its events had ended (warnings.go).
	Warnings, LateWarnings []string
}

// Execute is the main job without any printing: resolve the config, build
// the team, run the orchestration with logs. Errors before the run starts
// carry their exit code; the run's own outcome is in Outcome.Status.
func Execute(ctx context.Context, env *Env, rq Request) (*Outcome, error) {
	env.WithDefaults()
	env = env.serialized()
	if strings.TrimSpace(rq.Question) == "" {
		return nil, usageErr("the question is empty")
	}
	if err := checkQuestion(rq.Question); err != nil {
		return nil, err
	}
	warn := &warnings{}
	// A run that never starts has no events: its warnings go to stderr.
	defer warn.unpublished(env.Stderr)
	getenv := env.Getenv
	if !env.DotEnvLoaded {
		var err error
		if getenv, err = LoadEnv(env); err != nil {
			return nil, err
		}
	}
	if rq.Timeout != 0 { // 0: the config's
		if _, err := config.Seconds("--orchestrator-timeout", rq.Timeout); err != nil {
			return nil, usageErr("%v", err)
		}
	}
	prepare := prepareFresh
	if rq.Teams != nil {
		prepare = rq.Teams.prepare
	}
	p, release, err := prepare(env, &rq, getenv)
	if err != nil {
		if p != nil {
			warn.config(p.cfg.Warnings) // printed, as the run never starts (unpublished)
		}
		return nil, err
	}
	defer release()
	cfg, t := p.cfg, p.team
	warn.team(cfg, t)
	for _, s := range p.warnings {
		warn.add("%s", s)
	}
	if rq.Timeout > 0 {
		c := *cfg // p may be shared by concurrent runs
		c.Orchestrator.TimeoutSeconds = rq.Timeout
		cfg = &c
	}
	agents, wss, err := withWorkspaces(cfg, env.WorkDir, env.Now(), withFinalFormat(withParams(t.agents, rq.Params), rq.FinalFormat), rq.ContextPaths...)
	if err != nil {
		return nil, err
	}
	defer wss.closeMCP()
	defer wss.closeRunners()
	defer wss.closeCLIAgents()
	if agents, err = wss.withCLIAgents(t.cli, agents); err != nil {
		return nil, err
	}
	if agents, err = wss.withKit(agents, rq.PreviousTurn); err != nil {
		return nil, err
	}
	if agents, err = wss.withTaskPlanning(cfg, agents, rq.WorkspaceFiles); err != nil {
		return nil, err
	}
	agents = wss.withChecklistFiles(agents)
	agents = withPlanning(cfg.Orchestrator, agents)
	agents, subs, subWarnings, err := withSubagents(ctx, env, getenv, cfg, agents, wss)
	if err != nil {
		return nil, err
	}
	defer subs.close(nil)
	wss.warnings = append(wss.warnings, subWarnings...)
	for _, w := range wss.warnings {
		warn.add("%s", w)
	}
	for _, ref := range rq.MissingRefs {
		warn.add("%s in the question names no file or directory in %s: nothing is shared for it", ref, env.WorkDir)
	}
	settings, err := cfg.Settings()
	if err != nil {
		return nil, configErr(err)
	}
	if rq.MaxCostUSD > 0 {
		settings.MaxCostUSD = rq.MaxCostUSD
	}
	if rq.MaxTokens > 0 {
		settings.MaxTokens = rq.MaxTokens
	}
	subtasks := withDecomposition(cfg, rq.CoordinationMode, &settings)
	if rq.FinalFormat != nil {
		// Only the final presentation is asked for the format: a winning
		// answer that stands as it is was never told of it.
		settings.Presentation = coord.PresentAlways
	}
	level, logOut := slog.LevelInfo, io.Discard
	if rq.Debug {
		level, logOut = slog.LevelDebug, env.Stderr
	}
	// The logs and the outcome report what the config asks and the run does
	// not do: what the config's keys say, what building the team and the
	// workspaces found missing, and the MCP servers left out as the run
	// finds them.
	ignored := slices.Concat(cfg.IgnoredFeatures(), t.dropped, wss.dropped)
	wss.ignored.seed(ignored)
	wss.ignored.warnings = warn
	broker := event.NewBroker()
	// Every view of the run (the broker's, the log writer's) calls an agent
	// stalled when its request has received no byte for half the idle
	// timeout (event.StallAfterFor): visible before the timeout fails it.
	acts := orchestrator.NewActivities(agents)
	stallAfter := event.StallAfterFor(t.guards.IdleLimit())
	watchBytes := func(v *event.View) {
		v.SetStallAfter(stallAfter)
		v.SetSilence(acts.SinceLastByte)
	}
	watchBytes(broker.View())
	var logs *runlog.Writer
	var noLogs string // why there are none, when the disk had no room
	if !rq.NoLogs && (cfg.UI.LoggingEnabled || rq.Debug || rq.Automation) {
		root := rq.LogDir
		if root == "" {
			root = filepath.Join(env.WorkDir, ".massgen", "massgen_logs")
		}
		logs, err = openLogs(root, env.Now(), metadata(cfg, rq, ignored), rq.Turn)
		switch {
		case err != nil && runlog.IsNoSpace(err):
			// A full disk does not stop the run: it goes on without logs,
			// and says so.
			noLogs = fmt.Sprintf("no logs were written: there is no space for them under %s (%v)", root, err)
			warn.add("%s", noLogs)
			logs = nil
		case err != nil:
			return nil, execErr("cannot create the log directory: %w", err)
		default:
			if rq.Turn != nil && rq.Turn.Opened != nil {
				if err := rq.Turn.Opened(logs.Dir()); err != nil {
					warn.add("%v", err)
				}
			}
			logOut = io.MultiWriter(logOut, logs.LogWriter())
			watchBytes(logs.View())
			wss.ignored.watch(logs.View())
		}
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))
	for _, n := range t.notes {
		log.Info(n)
	}
	ctx = withRunLog(ctx, log)
	runLogDir := ""
	if logs != nil {
		runLogDir = logs.Dir()
	}
	ctx, mcpDone := t.withMCPRun(ctx, log, runLogDir, runDeadline(cfg), wss.ignored)

	out := &Outcome{IgnoredFeatures: ignored, LogsIncomplete: noLogs}
	var wg sync.WaitGroup
	// Persist, then deliver: every event but the deltas is in
	// coordination_events.jsonl (written, so the OS keeps it across a kill
	// -9) and a session turn's answers and votes are committed to the
	// sessions database before any display, client or writer sees them.
	if logs != nil {
		broker.Persist(logs.Persist)
	}
	if rq.Turn != nil && rq.Turn.Persist != nil {
		broker.Persist(warn.sink(rq.Turn.Persist))
	}
	// The run's own writers are never cut for lagging: they queue.
	if logs != nil {
		out.LogDir = logs.Dir()
		wss.setLogDir(out.LogDir)
		subs.setLogDir(out.LogDir)
		sub := broker.SubscribeWith(event.SubscribeOptions{NeverCut: true})
		// The log writer ends when the broker closes, not when ctx does, so
		// an interrupted run still records its final events.
		wg.Go(func() { logs.Run(context.WithoutCancel(ctx), sub) })
	}
	if logs != nil || rq.Debug {
		sub := broker.SubscribeWith(event.SubscribeOptions{Skip: event.Deltas, NeverCut: true})
		wg.Go(func() { logEvents(log, sub) })
	}
	// OpenTelemetry traces and metrics, when OTEL_* asks for them (nil
	// otherwise): a subscriber like the others, flushed before we return.
	otel := telemetry.Start(getenv, broker, &lineWriter{w: warn})
	if rq.Observe != nil {
		// The observer is this process's own output (a display, the event
		// stream, the library's OnEvent), whose contract is that every
		// event but streamed text is delivered: it is never cut. It is
		// in-process and a run's must-deliver events are few, so what a
		// stalled reader can hold is bounded by the run.
		sub := broker.SubscribeWith(event.SubscribeOptions{Skip: rq.ObserveSkips, NeverCut: true})
		info := RunInfo{Agents: agents, LogDir: out.LogDir, Timeout: cmp.Or(settings.Timeout, coord.DefaultTimeout), Events: broker}
		wg.Go(func() { rq.Observe(sub, info) })
	}
	opts := orchestrator.Options{
		Agents:      agents,
		Settings:    settings,
		History:     rq.History,
		ClientTools: rq.ClientTools,
		Events:      broker,
		// The orchestrator adds it to the final prompt.
		FinalInstruction: finalInstruction(rq.FinalFormat),
		Now:              env.Now,
		Activities:       acts,
		Seed:             rq.Seed,
		SeedVotes:        rq.SeedVotes,
		Snapshot:         wss.snapshot(),
		Personas:         personas(cfg.Orchestrator.Personas, rq.Personas),
		CompressionRatio: cfg.Orchestrator.CompressionRatio,
		Subtasks:         subtasks,
	}
	if logs != nil {
		// The machine's steps go to coordination_replay.jsonl as it takes
		// them: the run can be replayed, even after a crash.
		if opts.Trace, err = logs.Trace(opts.MachineConfig()); err != nil {
			warn.add("writing logs: %v", err)
		}
	}
	// Everyone who reads the run's events has subscribed: the warnings
	// found so far come first. With no observer, they are also printed.
	warn.attach(broker, unobserved(rq, env.Stderr))
	out.Result = orchestrator.Run(ctx, rq.Question, opts)
	subs.close(out.Result) // background children end with the run
	if open := t.guards.Open(); open != nil && out.Status == orchestrator.Failed && out.Err != nil {
		// Say that the endpoints are held back, and until when (massgen
		// serve answers 503 with Retry-After).
		out.Err = fmt.Errorf("%w; %w", out.Err, open)
	}
	warn.detach()
	broker.Close()
	wg.Wait()
	otel.Finish(ctx)
	if err := broker.PersistErr(); err != nil {
		warn.add("storing events: %v", err)
	}
	mcpDone(out.LogDir)
	out.IgnoredFeatures = wss.ignored.features()
	if logs != nil {
		if err := logs.Close(); err != nil {
			warn.add("writing logs: %v", err)
		}
		out.LogsIncomplete = logs.Incomplete()
		out.AnswerFile = logs.AnswerFile()
	}
	if out.Workspace, out.ContextChanges, err = wss.finish(out.LogDir, out.Winner); err != nil {
		warn.add("keeping the winner's workspace in the logs: %v", err)
	}
	if out.LogDir != "" {
		// The stderr of the servers of agents with a workspace, as for the team's.
		if err := wss.copyMCPLogs(out.LogDir); err != nil {
			warn.add("keeping the MCP servers' logs: %v", err)
		}
	}
	if wss.snaps != nil {
		for _, w := range wss.snaps.drain() {
			warn.add("%s", w)
		}
	}
	out.Warnings, out.LateWarnings = warn.lines()
	return out, nil
}

// openLogs opens the log of a run: a new log_<timestamp>/ under root, or
// for a nested session turn turn_<N>/ inside the session's directory.
func openLogs(root string, now time.Time, meta runlog.Metadata, turn *TurnLog) (*runlog.Writer, error) {
	if turn == nil || !turn.Nested {
		return runlog.New(root, now, meta)
	}
	dir := turn.SessionDir
	if dir == "" {
		var err error
		if dir, err = runlog.NewDir(root, now); err != nil {
			return nil, err
		}
	}
	return runlog.NewTurn(dir, turn.N, now, meta)
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
	// warnings are this run's alone, besides the config's and the team's
	// (a TeamCache serving a previous version of the config).
	warnings []string
}

// preparer resolves the config of rq and builds its team; release is
// called when the run has ended. When the config was read but the team
// cannot be built, p holds the config alone (its warnings) with the error. A run
// prepares afresh (prepareFresh) unless it shares a TeamCache.
type preparer func(env *Env, rq *Request, getenv func(string) string) (p *prepared, release func(), err error)

func prepareFresh(env *Env, rq *Request, getenv func(string) string) (*prepared, func(), error) {
	cfg, err := ResolveConfig(env, rq, getenv)
	if err != nil {
		return nil, nil, err
	}
	t, err := buildTeam(cfg, getenv, env.WorkDir) // Execute publishes cfg's and t's warnings
	if err != nil {
		return &prepared{cfg: cfg}, nil, err
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

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func metadata(cfg *config.Config, rq Request, ignored []string) runlog.Metadata {
	m := runlog.Metadata{Question: rq.Question, ConfigPath: cfg.Path, ConfigRaw: cfg.Raw, Version: Version,
		Attempts: cfg.Orchestrator.MaxOrchestrationRestarts > 0, CLIArgs: rq.Args, IgnoredFeatures: ignored}
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
			rec := slog.NewRecord(r.Time, level, sub.View().Describe(e), 0)
			rec.Add(attrs...)
			_ = h.Handle(context.Background(), rec)
		}
	}
}

func finalInstruction(f *FinalFormat) string {
	if f == nil {
		return ""
	}
	return f.Instruction
}
