package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/termsafe"
)

// Env is the process environment as the CLI sees it; tests pass their own.
type Env struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Now and WorkDir are injectable for tests.
	Now     func() time.Time
	WorkDir string
	// DotEnvLoaded says Getenv already includes the .env files, so Execute
	// does not read them again (the server loads them once, at start).
	DotEnvLoaded bool
	// welcome is what a command printed just before it started a session
	// (quickstart: the config it wrote): the full-screen conversation
	// shows it too, since its screen hides the lines printed before it.
	welcome string
}

// app is the part of env a run sees. It points at env's fields' values, so
// the defaults a run fills in (WorkDir, Now) do not leak back.
func (e *Env) app() *app.Env {
	return &app.Env{Getenv: e.Getenv, Stderr: e.Stderr, Now: e.Now, WorkDir: e.WorkDir, DotEnvLoaded: e.DotEnvLoaded}
}

// Run executes the massgen command line and returns the process exit code.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	// Everything massgen prints on stderr (progress lines, notes, errors)
	// carries text from outside: a question, an answer, a provider's error,
	// an agent's name. Its control characters are shown, not obeyed, so
	// that an answer cannot retitle the window or clear the screen.
	env.Stderr = termsafe.Writer(env.Stderr)
	args = upstreamCommand(args)
	root := newRoot(ctx, &env, args)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		msg := strings.TrimSpace(err.Error())
		if msg != "" {
			fmt.Fprintf(env.Stderr, "massgen: %s\n", msg)
		}
	}
	return codeOf(err)
}

func newRoot(ctx context.Context, env *Env, argv []string) *cobra.Command {
	rq := app.Request{Logging: app.Logging{Args: argv}}
	var outputFile, cwdContext, displayFlag string
	var noAtRefs bool
	var up upstreamFlags
	var streamEvents bool
	var eventSchema int
	var models []string
	var historyFile string
	var modes modeFlags
	var web webFlags
	root := &cobra.Command{
		Use:   `massgen [flags] "question"`,
		Short: "Several LLM agents answer in parallel, refine each other's answers and vote; the best answer wins.",
		Long: `massgen runs a team of LLM agents on the same question. Each agent sees the others'
answers and either improves on them (new_answer) or votes for the best one (vote).
When every agent has voted since the last new answer, the most-voted answer's author
presents the final answer, which is printed alone on stdout.

Try it without any API key on the built-in simulator:
  massgen --config @examples/sim_three_agents "What is the capital of France?"`,
		Args:          cobra.ArbitraryArgs, // checked in RunE, after command words
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       app.Version,
		RunE: func(cmd *cobra.Command, args []string) error {
			if done, err := up.mapped(cmd); done {
				return err
			}
			if err := up.unavailable(); err != nil {
				return err
			}
			up.notes(env.Stderr)
			args, err := modes.apply(&rq, args)
			if err != nil {
				return err
			}
			// A command word after -- is a question.
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				if err := commandWord(args[0]); err != nil {
					return err
				}
			}
			if up.listSessions {
				return listSessions(cmd.Context(), env, up.all)
			}
			// Shared with every turn, interactive ones included.
			if cwdContext != "" {
				perm, ok := map[string]string{"ro": "read", "read": "read", "rw": "write", "write": "write"}[cwdContext]
				if !ok {
					return usageErr("--cwd-context takes ro or rw (read or write), not %q", cwdContext)
				}
				rq.ContextPaths = append(rq.ContextPaths, config.ContextPath{Path: env.WorkDir, Permission: perm})
			}
			mode, err := chooseDisplay(env, displayFlag, up.noDisplay, rq.Automation)
			if err != nil {
				return err
			}
			if err := stdinConfig(env, &rq, len(args) > 0); err != nil {
				return err
			}
			if err := team(env, &rq, models, historyFile); err != nil {
				return err
			}
			if displayFlag == "" && !up.noDisplay && !rq.Automation {
				mode = configDisplay(env, rq, mode)
			}
			if cmd.Flags().Changed("orchestrator-timeout") {
				// NaN, the infinities and values past a year are refused
				// here too: the interactive session takes the flag as well.
				if _, err := config.Seconds("--orchestrator-timeout", rq.Timeout); err != nil {
					return usageErr("%v", err)
				}
			}
			so := app.SessionOptions{Continue: up.cont, ID: up.sessionID}
			if web.on {
				if len(args) > 0 || streamEvents {
					return usageErr("--web opens the Web UI, where the question is typed: give no question (and no --stream-events)")
				}
				return runWeb(cmd.Context(), env, rq, web)
			}
			for _, name := range []string{"web-host", "web-port", "no-browser", "web-config-dir"} {
				if cmd.Flags().Changed(name) {
					return usageErr("--%s goes with --web", name)
				}
			}
			if modes.planMode() {
				return runPlanMode(cmd.Context(), env, rq, &modes, args, outputFile)
			}
			switch {
			case len(args) == 0 && streamEvents:
				return usageErr("no question given: --stream-events runs one question, as in massgen --stream-events \"your question\"")
			case len(args) == 0:
				return interactive(cmd.Context(), env, rq, outputFile, mode, so, !noAtRefs)
			case len(args) > 1:
				return usageErr("one question at a time: quote it, as in massgen \"%s\"", strings.Join(args, " "))
			}
			rq.Question = args[0]
			if !noAtRefs {
				rq.ContextPaths = append(rq.ContextPaths, app.AtReferences(rq.Question, env.WorkDir)...)
				rq.MissingRefs = app.MissingAtReferences(rq.Question, env.WorkDir)
			}
			if streamEvents {
				if eventSchema != 1 && eventSchema != event.SchemaVersion {
					return usageErr("--event-schema %d: the event schemas are 1 (--stream-events' own line format, the default) and %d (the records of the logs and massgen serve)", eventSchema, event.SchemaVersion)
				}
				return runStreamed(cmd.Context(), env, rq, outputFile, eventSchema, so)
			}
			return runQuestion(cmd.Context(), env, rq, outputFile, mode, so)
		},
	}
	fl := root.Flags()
	fl.StringVar(&rq.Config, "config", "", "config file (MassGen YAML/JSON), @examples/NAME, or - to read it from standard input")
	fl.StringVar(&rq.Model, "model", "", "run a single agent on this model (backend inferred from the name)")
	fl.StringVar(&rq.Backend, "backend", "", "backend type for --model (openai, claude, gemini, grok, groq, sim, …)")
	fl.StringVar(&rq.BaseURL, "base-url", "", "base URL for --model (OpenAI-compatible endpoint)")
	fl.StringVar(&rq.SystemMessage, "system-message", "", "system message for --model")
	fl.BoolVar(&rq.Automation, "automation", false, "print only stable KEY: value lines (for scripts and agents)")
	fl.StringVar(&displayFlag, "display", "", "tui (live full-screen view; the default on a terminal), plain (progress lines), or silent")
	fl.StringVar(&outputFile, "output-file", "", "also write the final answer to this file")
	fl.Float64Var(&rq.Timeout, "orchestrator-timeout", 0, "whole-run timeout in seconds (overrides the config)")
	fl.BoolVar(&rq.NoLogs, "no-logs", false, "do not write the log directory")
	fl.StringVar(&rq.LogDir, "log-dir", "", "root of the log directories (default .massgen/massgen_logs)")
	fl.BoolVar(&rq.Debug, "debug", false, "verbose logging to stderr and massgen.log")
	fl.BoolVar(&noAtRefs, "no-parse-at-references", false, "do not share the files a question names as @path (read) or @path:w (write)")
	fl.StringVar(&cwdContext, "cwd-context", "", "share the current directory with the agents that have a cwd: ro or rw (rw: the winner may write it in its final presentation)")
	fl.BoolVar(&streamEvents, "stream-events", false, "print the run's events as JSON lines on stdout, ending with a \"finished\" line (see docs/events.md)")
	fl.IntVar(&eventSchema, "event-schema", 1, "with --stream-events: 1, its own line format, or 2, the one event schema of the logs and massgen serve (docs/events.md)")
	fl.StringSliceVar(&models, "models", nil, "a team of these models, one agent each (comma-separated; backend inferred from each name)")
	fl.StringVar(&historyFile, "history-file", "", "earlier turns of the conversation: a JSON file [{\"role\": \"user\"|\"assistant\", \"content\": \"…\"}]")
	web.register(fl)
	modes.register(fl)
	up.register(root)
	root.AddCommand(newConfigCmd(env), newSimCmd(env), newExamplesCmd(env), newServeCmd(env), newMCPCmd(env),
		newSessionsCmd(env), newLogsCmd(env), newReplayCmd(env), newSetupCmd(env), newQuickstartCmd(env), newInitCmd(env),
		newEvalCmd(env))
	return root
}

// team applies --models and --history-file to rq.
func team(env *Env, rq *app.Request, models []string, historyFile string) error {
	if len(models) > 0 {
		if rq.Config != "" || rq.Model != "" {
			return usageErr("give the team as --models, --config or --model, not several")
		}
		agents, err := app.ModelAgents(models, env.Getenv)
		if err != nil {
			return err
		}
		rq.Agents = agents
	}
	if historyFile != "" {
		h, err := readHistory(env, historyFile)
		if err != nil {
			return err
		}
		rq.History = h
	}
	return nil
}
