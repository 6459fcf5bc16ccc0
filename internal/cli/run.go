package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/runlog"
)

// runQuestion is the main job: resolve the config, build the team, run the
// orchestration with logs and a display, print the answer, map the outcome
// to an exit code.
func runQuestion(ctx context.Context, env *Env, f *runFlags, question string, timeoutSet bool) error {
	if env.WorkDir == "" {
		env.WorkDir, _ = os.Getwd()
	}
	getenv, err := loadEnv(env)
	if err != nil {
		return err
	}
	cfg, err := resolveConfig(env, f, getenv)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(env.Stderr, "warning: %s\n", w)
	}
	if timeoutSet {
		if f.timeout <= 0 {
			return usageErr("--orchestrator-timeout must be a positive number of seconds")
		}
		cfg.Orchestrator.TimeoutSeconds = f.timeout
	}
	level := slog.LevelInfo
	if f.debug {
		level = slog.LevelDebug
	}
	logOut := io.Discard
	if f.debug {
		logOut = env.Stderr
	}
	broker := event.NewBroker()
	var logs *runlog.Writer
	if !f.noLogs && (cfg.UI.LoggingEnabled || f.debug || f.automation) {
		root := f.logDir
		if root == "" {
			root = filepath.Join(env.WorkDir, ".massgen", "massgen_logs")
		}
		logs, err = runlog.New(root, env.Now(), metadata(cfg, question, f))
		if err != nil {
			return &exitError{code: ExitExecution, err: fmt.Errorf("cannot create the log directory: %w", err)}
		}
		logOut = io.MultiWriter(logOut, logs.LogWriter())
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: level}))

	t, err := buildTeam(cfg, getenv, log)
	if err != nil {
		if logs != nil {
			logs.Close()
		}
		return err
	}
	defer t.Close()

	var wg sync.WaitGroup
	if logs != nil {
		sub := broker.Subscribe()
		wg.Go(func() { logs.Run(context.WithoutCancel(ctx), sub) })
	}
	disp := newDisplay(env, f.automation, t.agents)
	if logs != nil {
		disp.logDir(logs.Dir())
	}
	sub := broker.Subscribe()
	wg.Go(func() { disp.run(sub) })

	o := cfg.Orchestrator
	res := orchestrator.Run(ctx, question, orchestrator.Options{
		Agents:               t.agents,
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
		Events:               broker,
		Now:                  env.Now,
	})
	broker.Close()
	wg.Wait()
	answerFile := ""
	if logs != nil {
		if err := logs.Close(); err != nil {
			fmt.Fprintf(env.Stderr, "warning: writing logs: %v\n", err)
		}
		answerFile = logs.AnswerFile()
	}
	return finish(env, f, res, answerFile)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// finish prints the outcome and maps it to an exit code.
func finish(env *Env, f *runFlags, res *orchestrator.Result, answerFile string) error {
	if res.Status == orchestrator.Completed && f.outputFile != "" {
		p := f.outputFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.WorkDir, p)
		}
		if err := os.WriteFile(p, []byte(res.Final+"\n"), 0o644); err != nil {
			return &exitError{code: ExitExecution, err: fmt.Errorf("cannot write --output-file: %w", err)}
		}
	}
	if f.automation {
		if res.Winner != "" {
			fmt.Fprintf(env.Stdout, "WINNER: %s\n", res.Winner)
		}
		if answerFile != "" {
			fmt.Fprintf(env.Stdout, "ANSWER_FILE: %s\n", answerFile)
		}
		fmt.Fprintf(env.Stdout, "DURATION: %.1fs\n", res.Duration.Seconds())
		fmt.Fprintf(env.Stdout, "RESULT: %s\n", res.Status)
		if res.Status == orchestrator.Completed {
			fmt.Fprintf(env.Stdout, "COMPLETED: %d agents, %.1fs total\n", len(res.Usage), res.Duration.Seconds())
		}
	} else if res.Status == orchestrator.Completed {
		fmt.Fprintln(env.Stdout, res.Final)
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

func metadata(cfg *config.Config, question string, f *runFlags) runlog.Metadata {
	m := runlog.Metadata{Question: question, ConfigPath: cfg.Path, ConfigRaw: cfg.Raw, Version: Version,
		Attempts: cfg.Orchestrator.MaxOrchestrationRestarts > 0, CLIArgs: os.Args[1:]}
	for _, a := range cfg.Agents {
		m.Agents = append(m.Agents, runlog.AgentInfo{ID: a.ID, Backend: a.Backend.Type, Model: modelName(a), Simulated: a.Backend.Type == "sim"})
	}
	return m
}
