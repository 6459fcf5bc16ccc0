package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/termsafe"
)

// runQuestion is the CLI's main job: run the question as a session turn
// (or, with --no-logs, on its own) with a display (mode is one of the
// display modes), then print the answer and map the outcome to an exit code.
func runQuestion(ctx context.Context, env *Env, rq app.Request, outputFile, mode string, so app.SessionOptions) error {
	if outputFile != "" {
		// Found now, not after the run has spent its tokens.
		if err := checkWritable(outputPath(env, outputFile)); err != nil {
			return usageErr("cannot write --output-file: %v", err)
		}
	}
	resume := so.Continue || so.ID != ""
	if rq.NoLogs && !resume {
		// --no-logs writes nothing under .massgen/, sessions included.
		if mode == displayTUI {
			return runTUI(ctx, env, rq, outputFile, func(ctx context.Context, quiet *app.Env, rq app.Request) (*app.Outcome, error) {
				return app.Execute(ctx, quiet, rq)
			})
		}
		observe(env, &rq, mode == displaySilent)
		out, err := app.Execute(ctx, env.app(), rq)
		if err != nil {
			return err
		}
		return finish(env, rq.Automation, outputFile, out)
	}
	sess, err := openSession(ctx, env, &rq, so, false)
	if err != nil {
		return err
	}
	defer closeSession(ctx, env, sess)
	return runTurn(ctx, env, sess, rq, outputFile, false, false, mode)
}

// printLateWarnings prints the warnings of the run that came after its
// events had ended (the display printed the others from the events).
func printLateWarnings(env *Env, out *app.Outcome) {
	for _, w := range out.LateWarnings {
		fmt.Fprintln(env.Stderr, w)
	}
}

// finish prints the outcome and maps it to an exit code.
func finish(env *Env, automation bool, outputFile string, out *app.Outcome) error {
	printLateWarnings(env, out)
	res, answerFile := out.Result, out.AnswerFile
	var writeErr error
	if res.Status == orchestrator.Completed && outputFile != "" {
		writeErr = os.WriteFile(outputPath(env, outputFile), []byte(res.Final+"\n"), 0o644)
		if writeErr != nil && automation && answerFile == "" {
			// stdout holds only KEY: value lines, and no log keeps the
			// answer: stderr is the one place left for it.
			fmt.Fprintln(env.Stderr, res.Final)
		}
	}
	if automation {
		if res.Winner != "" {
			fmt.Fprintf(env.Stdout, "WINNER: %s\n", res.Winner)
		}
		if answerFile != "" {
			fmt.Fprintf(env.Stdout, "ANSWER_FILE: %s\n", answerFile)
		}
		if out.Workspace != "" {
			fmt.Fprintf(env.Stdout, "WORKSPACE: %s\n", out.Workspace)
		}
		fmt.Fprintf(env.Stdout, "DURATION: %.1fs\n", res.Duration.Seconds())
		fmt.Fprintf(env.Stdout, "COST_USD: %.6f\n", res.TotalCost())
		fmt.Fprintf(env.Stdout, "RESULT: %s\n", res.Status)
		if res.Fallback != "" {
			// RESULT stays as it was (scripts match on it); this line says
			// the answer is the winner's stored one, and why.
			fmt.Fprintf(env.Stdout, "FALLBACK: %s\n", oneLine(res.Fallback))
		}
		if len(out.IgnoredFeatures) > 0 {
			fmt.Fprintf(env.Stdout, "WARNINGS: %s\n", strings.Join(out.IgnoredFeatures, ", "))
		}
		if out.LogsIncomplete != "" {
			fmt.Fprintf(env.Stdout, "LOGS_INCOMPLETE: %s\n", oneLine(out.LogsIncomplete))
		}
		if res.Status == orchestrator.Completed {
			fmt.Fprintf(env.Stdout, "COMPLETED: %d agents, %.1fs total\n", len(res.Usage), res.Duration.Seconds())
		}
	} else {
		if res.Status == orchestrator.Completed {
			// Byte for byte into a pipe or a file; on a terminal, with its
			// control characters shown rather than obeyed (see termsafe).
			final := res.Final
			if isTerminal(env.Stdout) {
				final = termsafe.String(final)
			}
			fmt.Fprintln(env.Stdout, final)
		}
		if res.Fallback != "" {
			fmt.Fprintf(env.Stderr, "note: %s\n", oneLine(res.Fallback))
		}
		if out.Workspace != "" {
			fmt.Fprintf(env.Stderr, "workspace of the winner: %s\n", out.Workspace)
		}
		for _, c := range out.ContextChanges {
			fmt.Fprintf(env.Stderr, "context path change: %s\n", c)
		}
		printUsage(env.Stderr, res)
	}
	switch res.Status {
	case orchestrator.Completed:
		if writeErr != nil {
			return &exitError{code: ExitExecution, err: fmt.Errorf("cannot write --output-file (the answer was printed instead): %w", writeErr)}
		}
		return nil
	case orchestrator.TimedOut:
		return &exitError{code: ExitTimeout, err: res.Err}
	case orchestrator.Interrupted:
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted; partial answers are kept in the log directory")}
	default:
		return &exitError{code: ExitExecution, err: res.Err}
	}
}

// oneLine keeps a reason on one line: a provider's error inside it may
// span several, and automation output is one KEY: value per line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func outputPath(env *Env, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.WorkDir, p)
	}
	return p
}

// checkWritable tells whether path can be written, leaving an existing
// file as it is and no new one behind.
func checkWritable(path string) error {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	if errors.Is(statErr, fs.ErrNotExist) {
		return os.Remove(path)
	}
	return nil
}

// printUsage ends plain output with what the run spent, per agent, with
// the agent's tool use when it called tools: tool rounds are requests too.
func printUsage(w io.Writer, res *orchestrator.Result) {
	ids := make([]string, 0, len(res.Usage))
	for id := range res.Usage {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var parts []string
	for _, id := range ids {
		u := res.Usage[id]
		part := fmt.Sprintf("%s %d/%d $%.4f", id, u.InputTokens, u.OutputTokens, res.Cost[id])
		if t := res.Tools[id]; t.Calls > 0 {
			part += " with " + event.ToolUse(t.Calls, t.Errors, t.Rounds)
		}
		parts = append(parts, part)
	}
	total := res.TotalUsage()
	fmt.Fprintf(w, "usage: %d input + %d output tokens, $%.4f in %s (%s)\n",
		total.InputTokens, total.OutputTokens, res.TotalCost(), runTime(res.Duration), strings.Join(parts, ", "))
}

// runTime says how long a run took: milliseconds under a second (a run on
// the simulator takes a few; "0.0s" read as if nothing ran), then seconds
// to a tenth, then minutes.
func runTime(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", max(d.Milliseconds(), 1))
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	sec := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%dm%02ds", sec/60, sec%60)
}
