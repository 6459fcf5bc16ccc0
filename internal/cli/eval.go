package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/eval"
	"github.com/massgen/massgen/internal/eval/dataset"
)

type evalFlags struct {
	configs     []string
	baselines   bool
	scorer      string
	judgeConfig string
	judgeAgent  string
	judgeModel  string
	judgePrompt string
	epochs      int
	reducer     string
	epochSeed   bool
	concurrency int
	timeout     float64
	maxCost     float64
	maxTokens   int64
	out         string
	resume      string
	seed        uint64
	resamples   int
	logs        bool
}

func newEvalCmd(env *Env) *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval DATASET --config TEAM [--config TEAM2 …] [--baselines]",
		Short: "Measure teams (and, with --baselines, each member alone) on a dataset of questions",
		Long: "Runs every item of DATASET (JSON lines or CSV: question, target, optional choices and metadata)\n" +
			"through every team, in-process as massgen runs one question, scores each answer, and writes a\n" +
			"journal, results.json, report.md and two SVG plots into --out. With --baselines each member of each\n" +
			"team also runs alone on the same items, and each team is compared with its best member.\n" +
			"An interrupted evaluation continues with --resume DIR. See docs/eval.md.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEval(cmd.Context(), env, cmd, args, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.configs, "config", nil, "a team to evaluate (a config file or @examples/NAME); repeat for several")
	fl.BoolVar(&f.baselines, "baselines", false, "also run each member of each team alone (its own backend block, a team of one)")
	fl.StringVar(&f.scorer, "scorer", "auto", "exact, match, numeric[:TOL|:PCT%], choice, regex[:PATTERN], auto (choice for items with choices, numeric for a number, match otherwise), judge, python:FILE:FUNCTION")
	fl.StringVar(&f.judgeConfig, "judge-config", "", "with --scorer judge: the config whose agent grades (its first, or --judge-agent)")
	fl.StringVar(&f.judgeAgent, "judge-agent", "", "with --scorer judge: the agent of --judge-config that grades")
	fl.StringVar(&f.judgeModel, "judge-model", "", "with --scorer judge: a model name to grade with (backend inferred), instead of --judge-config")
	fl.StringVar(&f.judgePrompt, "judge-prompt", "", "with --scorer judge: a file with the grading prompt ({question}, {target}, {answer}, {choices}; the reply ends GRADE: C, P or I)")
	fl.IntVar(&f.epochs, "epochs", 1, "runs of each item by each system")
	fl.StringVar(&f.reducer, "reducer", "mean", "how an item's epochs make its score: mean, max, min, median, mode")
	fl.BoolVar(&f.epochSeed, "epoch-seed", false, "send each epoch's number as the seed sampling parameter (every agent must be on Chat Completions, Gemini or the simulator)")
	fl.IntVar(&f.concurrency, "concurrency", 2, "runs in flight at once")
	fl.Float64Var(&f.timeout, "timeout", 0, "each run's deadline in seconds (0: the config's orchestrator timeout)")
	fl.Float64Var(&f.maxCost, "max-cost-usd", 0, "each run's budget in USD (0: the config's max_cost_usd)")
	fl.Int64Var(&f.maxTokens, "max-tokens", 0, "each run's budget in tokens (0: the config's max_total_tokens)")
	fl.StringVar(&f.out, "out", "", "the evaluation's directory (default .massgen/evals/eval_<time>)")
	fl.StringVar(&f.resume, "resume", "", "continue the evaluation in this directory (its journal names the dataset, teams and scorer)")
	fl.Uint64Var(&f.seed, "seed", eval.DefaultBootstrap.Seed, "the bootstrap's seed")
	fl.IntVar(&f.resamples, "resamples", eval.DefaultBootstrap.Resamples, "the bootstrap's resamples")
	fl.BoolVar(&f.logs, "logs", false, "keep each run's log directory (under DIR/logs)")
	cmd.AddCommand(newEvalCompareCmd(env))
	return cmd
}

func runEval(ctx context.Context, env *Env, cmd *cobra.Command, args []string, f *evalFlags) error {
	aenv := env.app()
	aenv.WithDefaults()
	if !aenv.DotEnvLoaded {
		getenv, err := app.LoadEnv(aenv)
		if err != nil {
			return err
		}
		aenv.Getenv, aenv.DotEnvLoaded = getenv, true
	}
	abs := func(p string) string {
		if p == "" || strings.HasPrefix(p, "@") || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(aenv.WorkDir, p)
	}
	var spec eval.Spec
	dir := abs(f.out)
	if f.resume != "" {
		// The journal says what the evaluation is; the run options
		// (concurrency, logs) may change.
		for _, name := range []string{"config", "baselines", "scorer", "judge-config", "judge-agent", "judge-model", "judge-prompt", "epochs", "reducer", "epoch-seed", "timeout", "max-cost-usd", "max-tokens", "out", "seed", "resamples"} {
			if cmd.Flags().Changed(name) {
				return usageErr("--resume continues the evaluation its journal describes: --%s cannot change it", name)
			}
		}
		if len(args) > 0 {
			return usageErr("--resume continues the evaluation its journal describes: give no dataset")
		}
		dir = abs(f.resume)
		old, _, err := eval.ReadJournal(filepath.Join(dir, eval.JournalFile))
		if err != nil {
			return usageErr("--resume: %v", err)
		}
		spec = old
		f.configs, f.baselines, f.epochs, f.reducer, f.epochSeed = old.Configs, old.Baselines, old.Epochs, old.Reducer, old.EpochSeed
		f.timeout, f.maxCost, f.maxTokens = old.TimeoutSeconds, old.MaxCostUSD, old.MaxTokens
		if err := scorerFlags(old.Scorer, f); err != nil {
			return usageErr("--resume: %v", err)
		}
		args = []string{old.Dataset}
	}
	if len(args) != 1 {
		return usageErr("massgen eval needs a dataset file (or --resume DIR)")
	}
	if len(f.configs) == 0 {
		return usageErr("massgen eval needs at least one --config TEAM")
	}
	if f.epochs < 1 || f.concurrency < 1 || f.resamples < 1 {
		return usageErr("--epochs, --concurrency and --resamples must be at least 1")
	}
	if f.timeout < 0 || f.maxCost < 0 || f.maxTokens < 0 {
		return usageErr("--timeout, --max-cost-usd and --max-tokens must not be negative")
	}
	if _, err := eval.Reduce(f.reducer, nil); err != nil {
		return usageErr("--reducer: %v", err)
	}
	ds, err := dataset.Load(abs(args[0]))
	if err != nil {
		return usageErr("%v", err)
	}
	for i, c := range f.configs {
		f.configs[i] = abs(c)
	}
	scorer, judgePrompt, err := buildScorer(ctx, aenv, f, abs)
	if err != nil {
		return err
	}
	if j, ok := scorer.(*eval.Judge); ok && f.resume != "" {
		j.Prompt, judgePrompt = spec.JudgePrompt, spec.JudgePrompt
	}
	if c, ok := scorer.(eval.Closer); ok {
		defer c.Close()
	}
	listSystems := eval.Systems
	if f.epochSeed {
		listSystems = eval.SeedSystems
	}
	systems, err := listSystems(aenv, f.configs, f.baselines)
	if err != nil {
		return err
	}
	if f.resume == "" {
		spec = eval.Spec{Started: aenv.Now().UTC(), Bootstrap: eval.Bootstrap{Resamples: f.resamples, Seed: f.seed, Confidence: 0.95}}
		if dir == "" {
			dir = filepath.Join(aenv.WorkDir, ".massgen", "evals", "eval_"+aenv.Now().Format("20060102_150405"))
		}
	}
	spec.Dataset, spec.DatasetSHA256, spec.Items = ds.Path, ds.SHA256, len(ds.Items)
	spec.Configs, spec.Baselines, spec.Systems = f.configs, f.baselines, systems
	spec.Scorer, spec.JudgePrompt, spec.Epochs, spec.Reducer, spec.EpochSeed = scorer.Name(), judgePrompt, f.epochs, f.reducer, f.epochSeed
	spec.TimeoutSeconds, spec.MaxCostUSD, spec.MaxTokens = f.timeout, f.maxCost, f.maxTokens
	fmt.Fprintf(env.Stderr, "massgen eval: %s × %s × %s into %s\n", count(len(ds.Items), "item"), count(len(systems), "system"), count(f.epochs, "epoch"), dir)
	res, err := eval.Evaluate(ctx, eval.Options{Env: aenv, Spec: spec, Dataset: ds, Scorer: scorer, Concurrency: f.concurrency,
		Dir: dir, Resume: f.resume != "", Logs: f.logs, Progress: env.Stderr})
	if res != nil {
		for _, s := range res.Systems {
			fmt.Fprintf(env.Stdout, "%-32s accuracy %.3f [%.3f, %.3f]  cost $%.4f  p50 %.1fs\n", s.Name, s.Accuracy, s.AccuracyCI[0], s.AccuracyCI[1], s.CostUSD, s.Latency.P50/1000)
		}
		for _, c := range res.Comparisons {
			fmt.Fprintf(env.Stdout, "%s vs %s: %+.3f [%+.3f, %+.3f] (%s)\n", c.A, c.B, c.Difference, c.CI[0], c.CI[1], eval.Verdict(c))
		}
		fmt.Fprintf(env.Stdout, "report: %s\n", filepath.Join(dir, eval.ReportFile))
	}
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		fmt.Fprintf(env.Stderr, "massgen eval: interrupted; continue with: massgen eval --resume %s\n", dir)
		return &exitError{code: ExitInterrupted, err: errors.New("")}
	case err != nil:
		return err
	}
	return nil
}

// scorerFlags sets the scorer flags back from a journal's scorer name.
func scorerFlags(name string, f *evalFlags) error {
	f.scorer = name
	if rest, ok := strings.CutPrefix(name, "judge:"); ok {
		f.scorer = "judge"
		if m, ok := strings.CutPrefix(rest, "model="); ok {
			f.judgeModel = m
		} else if c, ok := strings.CutPrefix(rest, "config="); ok {
			f.judgeConfig, f.judgeAgent, _ = strings.Cut(c, "#")
		} else {
			return fmt.Errorf("the journal's scorer %q is not one this massgen knows", name)
		}
	}
	return nil
}

// buildScorer makes the scorer of the flags; judgePrompt is the judge's
// own prompt, kept in the journal so that a resume grades alike.
func buildScorer(ctx context.Context, aenv *app.Env, f *evalFlags, abs func(string) string) (s eval.Scorer, judgePrompt string, err error) {
	switch {
	case f.scorer == "judge":
		if (f.judgeConfig == "") == (f.judgeModel == "") {
			return nil, "", usageErr("--scorer judge needs --judge-config or --judge-model (one of them)")
		}
		if f.judgePrompt != "" {
			data, err := os.ReadFile(abs(f.judgePrompt))
			if err != nil {
				return nil, "", usageErr("--judge-prompt: %v", err)
			}
			judgePrompt = string(data)
		}
		return &eval.Judge{Env: aenv, Config: abs(f.judgeConfig), Agent: f.judgeAgent, Model: f.judgeModel, Prompt: judgePrompt}, judgePrompt, nil
	case strings.HasPrefix(f.scorer, "python:"):
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		p, err := eval.NewPython(ctx, strings.TrimPrefix(f.scorer, "python:"), aenv.Getenv)
		if err != nil {
			return nil, "", usageErr("%v", err)
		}
		return p, "", nil
	}
	if f.judgeConfig != "" || f.judgeModel != "" || f.judgePrompt != "" {
		return nil, "", usageErr("--judge-config, --judge-model and --judge-prompt go with --scorer judge")
	}
	s, err = eval.ParseScorer(f.scorer)
	if err != nil {
		return nil, "", usageErr("--scorer: %v", err)
	}
	return s, "", nil
}

func newEvalCompareCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "compare A B",
		Short: "Put two evaluations' results side by side: accuracy difference with a paired bootstrap interval",
		Long: "A and B are results.json files (or the evaluations' directories). Each system of A is compared with\n" +
			"B's system of the same name (or, when they share none and each has one team, the two teams) on the\n" +
			"items both ran; the table goes to stdout as markdown.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rs [2]*eval.Results
			for i, p := range args {
				if !filepath.IsAbs(p) {
					p = filepath.Join(env.WorkDir, p)
				}
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					p = filepath.Join(p, eval.ResultsFile)
				}
				r, err := eval.ReadResults(p)
				if err != nil {
					return usageErr("%v", err)
				}
				rs[i] = r
			}
			cs, err := eval.CompareResults(rs[0], rs[1])
			if err != nil {
				return usageErr("%v", err)
			}
			fmt.Fprint(env.Stdout, eval.CompareMarkdown(args[0], args[1], rs[0], rs[1], cs))
			return nil
		},
	}
}
