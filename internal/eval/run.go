package eval

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/eval/dataset"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/provider"
)

// Files of an evaluation's directory.
const (
	JournalFile = "journal.jsonl"
	ResultsFile = "results.json"
	ReportFile  = "report.md"
)

// Options is one evaluation.
type Options struct {
	Env     *app.Env
	Spec    Spec // Systems filled in (Systems)
	Dataset *dataset.Dataset
	Scorer  Scorer
	// Concurrency bounds the runs in flight (default 1).
	Concurrency int
	// Dir holds the journal, the results, the report and its plots.
	Dir string
	// Resume continues the journal in Dir instead of starting one.
	Resume bool
	// Logs keeps each run's log directory, under Dir/logs.
	Logs bool
	// Progress, when set, gets a line per finished run.
	Progress io.Writer
}

// Systems are the contestants of configs: each team, and with baselines
// each of its members alone (its own backend block, a team of one).
func Systems(env *app.Env, configs []string, baselines bool) ([]System, error) {
	return systems(env, configs, baselines, false)
}

// SeedSystems is Systems for an evaluation that sends each epoch's seed:
// every agent must be on an API that takes the seed parameter (Chat
// Completions and its compatibles, Gemini, the simulator), since the
// others refuse a request that carries it.
func SeedSystems(env *app.Env, configs []string, baselines bool) ([]System, error) {
	return systems(env, configs, baselines, true)
}

func systems(env *app.Env, configs []string, baselines, seed bool) ([]System, error) {
	var out []System
	seen := map[string]int{}
	for _, c := range configs {
		e := *env
		e.Stderr = io.Discard // the first run prints the config's warnings
		cfg, err := app.ResolveConfig(&e, &app.Request{Team: app.Team{Config: c}}, e.Getenv)
		if err != nil {
			return nil, err
		}
		for _, a := range cfg.Agents {
			spec, _ := provider.Lookup(a.Backend.Type)
			if seed && spec.Wire != provider.WireChat && spec.Wire != provider.WireGemini && spec.Wire != provider.WireSim {
				return nil, fmt.Errorf("--epoch-seed: agent %s of %s is on %s, whose API takes no seed parameter", a.ID, c, a.Backend.Type)
			}
		}
		name := strings.TrimSuffix(filepath.Base(strings.TrimPrefix(c, "@")), filepath.Ext(c))
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		out = append(out, System{Name: name, Kind: "team", Config: c})
		if !baselines {
			continue
		}
		for _, a := range cfg.Agents {
			out = append(out, System{Name: name + "/" + a.ID, Kind: "member", Config: c, Agent: a.ID, Team: name})
		}
	}
	return out, nil
}

type task struct {
	sys   System
	item  dataset.Item
	epoch int
}

// Evaluate runs the evaluation: every (system, item, epoch) not yet in the
// journal, Concurrency at a time. It writes the results, the report and
// the plots into Dir when the runs are done, and also when ctx is
// cancelled (then the results say complete: false, and Resume finishes
// them). A config that cannot run stops everything.
func Evaluate(ctx context.Context, o Options) (*Results, error) {
	spec := o.Spec
	if spec.Epochs < 1 {
		spec.Epochs = 1
	}
	spec.Reducer = cmp.Or(spec.Reducer, "mean")
	if _, err := Reduce(spec.Reducer, nil); err != nil {
		return nil, err
	}
	if spec.Bootstrap.Resamples == 0 {
		spec.Bootstrap = DefaultBootstrap
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	jpath := filepath.Join(o.Dir, JournalFile)
	var j *Journal
	var done []Run
	if o.Resume {
		var old Spec
		var err error
		if j, old, done, err = OpenJournal(jpath); err != nil {
			return nil, err
		}
		if err := sameSpec(old, spec); err != nil {
			j.Close()
			return nil, fmt.Errorf("cannot resume %s: %w", o.Dir, err)
		}
		spec.Started, spec.Bootstrap = old.Started, old.Bootstrap
	} else {
		if spec.Started.IsZero() {
			spec.Started = time.Now().UTC()
		}
		var err error
		if j, err = CreateJournal(jpath, spec); err != nil {
			if errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("%s already holds an evaluation: resume it with --resume, or choose another --out", o.Dir)
			}
			return nil, err
		}
	}
	defer j.Close()

	type key struct {
		sys, item string
		epoch     int
	}
	have := map[key]bool{}
	for _, r := range done {
		have[key{r.System, r.Item, r.Epoch}] = true
	}
	var todo []task
	for _, it := range o.Dataset.Items {
		for e := 1; e <= spec.Epochs; e++ {
			for _, s := range spec.Systems {
				if !have[key{s.Name, it.ID, e}] {
					todo = append(todo, task{s, it, e})
				}
			}
		}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stderr := &onceWriter{w: cmp.Or[io.Writer](o.Env.Stderr, io.Discard), seen: map[string]bool{}}
	var mu sync.Mutex
	runs := append([]Run(nil), done...)
	var fatal error
	sem := make(chan struct{}, max(o.Concurrency, 1))
	var wg sync.WaitGroup
	total, finished := len(todo), 0
launch:
	for _, t := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break launch
		}
		wg.Go(func() {
			defer func() { <-sem }()
			r, err := runOne(ctx, o, spec, stderr, t)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if fatal == nil {
					fatal = err
					cancel(err)
				}
				return
			}
			if r == nil {
				return // interrupted: left for a resume
			}
			if err := j.Append(*r); err != nil && fatal == nil {
				fatal = fmt.Errorf("writing the journal: %w", err)
				cancel(fatal)
				return
			}
			runs = append(runs, *r)
			finished++
			if o.Progress != nil {
				verdict := fmt.Sprintf("score %.2f", r.Score)
				if r.Error != "" {
					verdict += " (" + firstLine(r.Error) + ")"
				}
				fmt.Fprintf(o.Progress, "eval: [%d/%d] %s item %s epoch %d: %s, %.1fs\n", finished, total, r.System, r.Item, r.Epoch, verdict, r.LatencyMS/1000)
			}
		})
	}
	wg.Wait()
	if fatal != nil {
		return nil, fatal
	}
	ids := make([]string, len(o.Dataset.Items))
	for i, it := range o.Dataset.Items {
		ids[i] = it.ID
	}
	res, err := Summarise(spec, ids, runs)
	if err != nil {
		return nil, err
	}
	if err := WriteResults(filepath.Join(o.Dir, ResultsFile), res); err != nil {
		return nil, err
	}
	if err := WriteReport(o.Dir, res); err != nil {
		return nil, err
	}
	return res, context.Cause(ctx)
}

// runOne runs one item through one system, in-process as `massgen` runs a
// question, and scores the answer. It returns nil, nil when ctx ended the
// run (it is not a result), and an error only when the system cannot run
// at all.
func runOne(ctx context.Context, o Options, spec Spec, stderr io.Writer, t task) (*Run, error) {
	var recs []event.Record
	rq := app.Request{
		Question: t.item.Prompt(),
		Team:     app.Team{Config: t.sys.Config},
		Overrides: app.Overrides{
			SingleAgent: t.sys.Agent,
			Timeout:     spec.TimeoutSeconds,
			MaxCostUSD:  spec.MaxCostUSD,
			MaxTokens:   spec.MaxTokens,
		},
		Logging: app.Logging{
			NoLogs: !o.Logs,
			LogDir: filepath.Join(o.Dir, "logs"),
		},
		Observer: app.Observer{
			// The observer runs in Execute's own wait group: recs is whole
			// when Execute returns.
			Observe: func(sub *event.Subscription, _ app.RunInfo) {
				for {
					e, ok := sub.Next(nil)
					if !ok {
						return
					}
					if w, ok := e.(event.Warning); ok {
						fmt.Fprintln(stderr, w.Line()) // once each, as the runs' warnings always were
					}
					recs = append(recs, event.ToRecord(e))
				}
			},
			ObserveSkips: event.Deltas,
		},
	}
	if spec.EpochSeed {
		rq.Params = map[string]any{"seed": t.epoch}
	}
	env := *o.Env
	env.Stderr = stderr
	start := time.Now()
	out, err := app.Execute(ctx, &env, rq)
	elapsed := time.Since(start)
	if ctx.Err() != nil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.sys.Name, err)
	}
	for _, w := range out.LateWarnings {
		fmt.Fprintln(stderr, w)
	}
	r := &Run{System: t.sys.Name, Item: t.item.ID, Epoch: t.epoch, Status: string(out.Status), Answer: out.Final,
		Winner: out.Winner, Votes: out.Tally, Attempts: out.Attempts, CostUSD: out.TotalCost(),
		LatencyMS: float64(elapsed.Microseconds()) / 1000, LogDir: out.LogDir, Finished: time.Now().UTC()}
	u := out.TotalUsage()
	r.InputTokens, r.OutputTokens = u.InputTokens, u.OutputTokens
	a := app.Analyze(recs)
	r.Answers = a.Answers
	for _, w := range a.Agents {
		r.Restarts += w.Restarted
	}
	if out.Status != orchestrator.Completed {
		r.Error = fmt.Sprintf("the run ended %s", out.Status)
		if out.Err != nil {
			r.Error += ": " + out.Err.Error()
		}
	}
	if out.Final == "" {
		if r.Error == "" {
			r.Error = "the run gave no answer"
		}
		return r, nil // scored 0
	}
	s, err := o.Scorer.Score(ctx, t.item, out.Final)
	if ctx.Err() != nil {
		return nil, nil
	}
	if err != nil {
		r.Error, r.ScoreError = "scoring: "+err.Error(), true
		s = Score{}
	}
	r.Score, r.Extracted, r.Explanation = s.Value, s.Extracted, s.Explanation
	return r, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// onceWriter passes each distinct line on once: every run of a system
// prints the same config warnings, and an evaluation of a hundred items
// should say each once.
type onceWriter struct {
	mu   sync.Mutex
	w    io.Writer
	seen map[string]bool
	buf  []byte
}

func (o *onceWriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	for {
		i := bytes.IndexByte(o.buf, '\n')
		if i < 0 {
			break
		}
		line := string(o.buf[:i+1])
		o.buf = o.buf[i+1:]
		if !o.seen[line] {
			o.seen[line] = true
			if _, err := io.WriteString(o.w, line); err != nil {
				return len(p), err
			}
		}
	}
	return len(p), nil
}
