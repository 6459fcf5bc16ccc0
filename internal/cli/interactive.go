package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/store"
)

const interactiveHelp = `Type a question and press Enter: the team answers it, with the earlier turns as history.
A block between """ (or ''') lines is one multi-line question:
  """
  first line
  second line
  """
In the full-screen display Alt-Enter adds a line too (plain line input cannot see it).

Commands:
  /help, /h          this help
  /status            the session: id, turns, history, config, logs
  /config            the config file in use
  /inspect           the last turn's answers and votes
  /save [FILE]       write the conversation as Markdown (default <session>.md)
  /context PATH[:w]  share a file or directory with the agents that have a workspace
                     for the rest of the session (read-only; :w the winner may write it)
@path, @path:w in a question share it for that question only
  /clear, /reset     forget the conversation: the next question starts a new session
  /quit, /exit, /q   leave (so does Ctrl+D)
Ctrl+C during a turn: in the full-screen display it cancels the turn (Ctrl+C at an
empty prompt leaves); with plain lines it interrupts the turn and leaves.
`

// interactive is massgen without a question: a loop of turns read from
// stdin, each a team run that sees the earlier turns. On a terminal with
// the TUI the loop is interactiveTUI's; both share dispatch. It ends at EOF or /quit with exit 0, at
// Ctrl+C with exit 4.
func interactive(ctx context.Context, env *Env, rq app.Request, outputFile, mode string, o app.SessionOptions, atRefs bool) error {
	if rq.Automation {
		return usageErr("no question given: --automation runs one question, as in massgen --automation \"your question\"")
	}
	sess, err := openSession(ctx, env, &rq, o, true)
	if err != nil {
		return err
	}
	defer closeSession(ctx, env, sess)
	if mode == displayTUI {
		if isTerminal(env.Stdin) {
			return interactiveTUI(ctx, env, sess, rq, outputFile, atRefs)
		}
		mode = displayPlain // the prompt needs keys from a terminal
	}
	fmt.Fprintln(env.Stderr, `massgen interactive mode: type a question, /help for commands, """ for several lines, Ctrl+D or /quit to leave.`)
	if p, ok := sess.Pending(); ok {
		fmt.Fprintf(env.Stderr, "resuming interrupted turn %d: %s (its %d accepted answers are kept, not asked for again)\n",
			p.N, cut(p.Question, 80), len(p.Answers))
		err := runTurn(ctx, env, sess, rq, outputFile, true, true, mode)
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, err: errors.New("interrupted; the finished turns are kept: massgen --continue resumes")}
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "massgen: %v\n", strings.TrimSpace(err.Error()))
		}
	}
	in := newInputReader(env.Stdin)
	defer in.stop()
	for {
		fmt.Fprint(env.Stderr, "\nyou> ")
		q, ok := in.read(ctx)
		if !ok {
			if ctx.Err() != nil {
				return &exitError{code: ExitInterrupted, err: errors.New("interrupted")}
			}
			fmt.Fprintln(env.Stderr)
			return nil
		}
		if strings.TrimSpace(q) == "" {
			fmt.Fprintln(env.Stderr, "(type a question, or /help)")
			continue
		}
		q, quit, err := dispatch(ctx, env, env.Stdout, sess, &rq, q)
		if err != nil {
			fmt.Fprintf(env.Stderr, "massgen: %v\n", err)
		}
		if quit {
			return nil
		}
		if q == "" {
			continue
		}
		err = runTurn(ctx, env, sess, questionRequest(env, rq, q, atRefs), outputFile, true, false, mode)
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, err: errors.New("interrupted; the finished turns are kept: massgen --continue resumes")}
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "massgen: %v\n", strings.TrimSpace(err.Error()))
		}
	}
}

var errQuit = errors.New("quit")

// questionRequest is the turn's request for question q: the session's
// context paths plus, unless turned off, the files q names as @path or
// @path:w, for this question only.
func questionRequest(env *Env, rq app.Request, q string, atRefs bool) app.Request {
	rq.Question = q
	if atRefs {
		rq.ContextPaths = append(slices.Clip(rq.ContextPaths), app.AtReferences(q, env.WorkDir)...)
		rq.MissingRefs = app.MissingAtReferences(q, env.WorkDir)
	}
	return rq
}

// dispatch is what both front ends do with what the user typed: a command
// runs (printing to w) and q is ""; anything else is the question q.
// quit says the user asked to leave; an empty input asks for a question.
func dispatch(ctx context.Context, env *Env, w io.Writer, sess *app.Session, rq *app.Request, raw string) (q string, quit bool, err error) {
	q = strings.TrimSpace(raw)
	if q == "" {
		return "", false, nil
	}
	// A leading space makes a question of what would be a command.
	if !strings.HasPrefix(raw, " ") {
		if done, err := command(ctx, env, w, sess, rq, q); done {
			if err == errQuit {
				return "", true, nil
			}
			return "", false, err
		}
	}
	return q, false, nil
}

// command runs a slash command (and upstream's bare quit/exit/q, reset/clear);
// done says whether q was one.
func command(ctx context.Context, env *Env, w io.Writer, sess *app.Session, rq *app.Request, q string) (done bool, err error) {
	word, arg, _ := strings.Cut(q, " ")
	arg = strings.TrimSpace(arg)
	switch strings.ToLower(word) {
	case "/quit", "/exit", "/q", "quit", "exit", "q":
		return true, errQuit
	case "/help", "/h", "/?":
		fmt.Fprint(w, interactiveHelp)
	case "/clear", "/reset", "reset", "clear":
		if err := sess.Reset(ctx); err != nil {
			fmt.Fprintf(env.Stderr, "warning: %v\n", err)
		}
		fmt.Fprintln(w, "The conversation is forgotten: the next question starts a new session with no history.")
	case "/status":
		info := sess.Info()
		id := info.ID
		if id == "" {
			id = "(new; created with the first turn)"
		}
		fmt.Fprintf(w, "session:  %s\nturns:    %d in the history (%d messages)\nconfig:   %s\n",
			id, len(sess.History())/2, len(sess.History()), configName(rq))
		if info.LogDir != "" {
			fmt.Fprintf(w, "logs:     %s\n", info.LogDir)
		}
		if len(sess.Interrupted) > 0 {
			fmt.Fprintf(w, "interrupted earlier (not in the history): turns %v\n", sess.Interrupted)
		}
	case "/config":
		fmt.Fprintf(w, "config: %s\n", configName(rq))
		if rq.Config != "" && !strings.HasPrefix(rq.Config, "@") {
			fmt.Fprintf(w, "edit it in your editor; it is read again at the next turn (check it with massgen config validate %s)\n", rq.Config)
		}
	case "/inspect":
		return true, inspect(ctx, w, sess)
	case "/save":
		info := sess.Info()
		if info.ID == "" {
			return true, errors.New("nothing to save yet: no turn has run")
		}
		file := arg
		if file == "" {
			file = info.ID + ".md"
		}
		turns, err := sess.Store().Turns(ctx, info.ID)
		if err != nil {
			return true, err
		}
		path := outputPath(env, file)
		if err := os.WriteFile(path, []byte(app.ExportMarkdown(info, turns)), 0o644); err != nil {
			return true, err
		}
		fmt.Fprintf(w, "saved %s to %s\n", count(len(turns), "turn"), path)
	case "/context":
		if arg == "" {
			return true, errors.New("/context PATH: which path?")
		}
		cps := app.AtReferences("@"+arg, env.WorkDir)
		if len(cps) == 0 {
			return true, fmt.Errorf("/context %s: no such file or directory (relative paths start at %s)", arg, env.WorkDir)
		}
		rq.ContextPaths = append(rq.ContextPaths, cps...)
		fmt.Fprintf(w, "shared %s (%s) with the agents that have a workspace, from the next question on\n", cps[0].Path, cps[0].Permission)
	default:
		if strings.HasPrefix(word, "/") {
			return true, fmt.Errorf("unknown command %s (/help lists them; to ask it as a question, start with a space)", word)
		}
		return false, nil
	}
	return true, nil
}

func configName(rq *app.Request) string {
	switch {
	case rq.Config != "":
		return rq.Config
	case rq.Model != "":
		return "--model " + rq.Model
	}
	return "discovered (./.massgen/config.yaml, ~/.config/massgen/config.yaml, or a team from the API keys set)"
}

// inspect prints the last turn's answers and votes, from the store.
func inspect(ctx context.Context, w io.Writer, sess *app.Session) error {
	info := sess.Info()
	if info.ID == "" || sess.LastTurn() == 0 {
		return errors.New("no turn has run in this session yet")
	}
	turns, err := sess.Store().Turns(ctx, info.ID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(turns, func(t store.Turn) bool { return t.N == sess.LastTurn() })
	if i < 0 {
		return fmt.Errorf("turn %d is not in the store", sess.LastTurn())
	}
	t := turns[i]
	fmt.Fprintf(w, "Turn %d (%s): %s\n", t.N, t.Status, cut(t.Question, 100))
	fmt.Fprintf(w, "Answers (%d):\n", len(t.Answers))
	for _, a := range t.Answers {
		fmt.Fprintln(w, hang(fmt.Sprintf("  %-10s %-12s ", a.Label, a.Agent), cut(a.Content, 300), inspectWidth))
	}
	fmt.Fprintf(w, "Votes (%d):\n", len(t.Votes))
	for _, v := range t.Votes {
		fmt.Fprintln(w, hang(fmt.Sprintf("  %-12s → %-12s (%s) ", v.Agent, v.Target, v.TargetLabel), cut(v.Reason, 200), inspectWidth))
	}
	if t.Winner != "" {
		fmt.Fprintf(w, "Winner: %s (%s)\n", t.Winner, t.WinnerLabel)
	}
	if t.LogDir != "" {
		fmt.Fprintf(w, "Logs: %s\n", t.LogDir)
	}
	return nil
}

// openSession opens the session a run works in and, when resuming one,
// runs its config unless the command line names another team.
func openSession(ctx context.Context, env *Env, rq *app.Request, o app.SessionOptions, interactive bool) (*app.Session, error) {
	sess, err := app.OpenSession(ctx, env.app(), o)
	if err != nil {
		return nil, err
	}
	if info := sess.Info(); info.ID != "" {
		if rq.Config == "" && rq.Model == "" && rq.Backend == "" && rq.ConfigYAML == nil {
			rq.Config = sess.ConfigPath()
		}
		if !rq.Automation {
			fmt.Fprintf(env.Stderr, "session %s: continuing after %s", info.ID, count(info.Turns, "turn"))
			if len(sess.Interrupted) > 0 {
				fmt.Fprintf(env.Stderr, " (turns %v were interrupted and are not in the history)", sess.Interrupted)
			}
			fmt.Fprintln(env.Stderr)
			if p, ok := sess.Pending(); ok && !interactive {
				fmt.Fprintf(env.Stderr, "note: turn %d was interrupted; massgen --continue without a question finishes it from its %d accepted answers\n",
					p.N, len(p.Answers))
			}
		}
	}
	return sess, nil
}

// closeSession closes the session's database, even when ctx is done (an
// interrupted turn is recorded as such), and warns when that fails.
func closeSession(ctx context.Context, env *Env, sess *app.Session) {
	if err := sess.Close(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintf(env.Stderr, "warning: sessions database: %v\n", err)
	}
}

// runTurn runs one question as the session's next turn with the display
// mode names, and prints the answer.
func runTurn(ctx context.Context, env *Env, sess *app.Session, rq app.Request, outputFile string, nested, resume bool, mode string) error {
	turn := sess.Turn
	if resume {
		turn = sess.ResumePending
	}
	var out *app.Outcome
	var err error
	if mode == displayTUI {
		return runTUI(ctx, env, rq, outputFile, func(ctx context.Context, quiet *app.Env, rq app.Request) (*app.Outcome, error) {
			defer sess.SetStderr(quiet.Stderr)()
			out, err := turn(ctx, rq, nested)
			if err == nil {
				// Held with the run's other stderr lines: written now,
				// it would land on the display's screen and scroll it.
				held := *env
				held.Stderr = quiet.Stderr
				sessionLine(&held, sess, rq, out)
			}
			return out, err
		})
	}
	observe(env, &rq, mode == displaySilent)
	out, err = turn(ctx, rq, nested)
	if err != nil {
		return err
	}
	sessionLine(env, sess, rq, out)
	return finish(env, rq.Automation, outputFile, out)
}

// sessionLine tells how to follow up on a completed turn.
func sessionLine(env *Env, sess *app.Session, rq app.Request, out *app.Outcome) {
	id := sess.Info().ID
	if rq.Automation || id == "" {
		return
	}
	switch out.Status {
	case orchestrator.Completed:
		fmt.Fprintf(env.Stderr, "session: %s, turn %d (massgen --continue asks a follow-up)\n", id, sess.LastTurn())
	case orchestrator.Interrupted:
		// Ctrl+C, or q in the display: the turn's accepted answers are
		// in the session, and --continue goes on from them.
		fmt.Fprintf(env.Stderr, "session: %s, turn %d interrupted (massgen --continue finishes it from its accepted answers)\n", id, sess.LastTurn())
	}
}

// observe gives rq the plain (or automation, or silent) display.
func observe(env *Env, rq *app.Request, silent bool) {
	automation := rq.Automation
	rq.Observe = func(sub *event.Subscription, info app.RunInfo) {
		d := newDisplay(env, automation)
		d.silent = silent
		if info.LogDir != "" {
			d.logDir(info.LogDir)
		}
		d.run(sub)
	}
	rq.ObserveSkips = append(slices.Clone(event.Deltas), event.Bookkeeping...) // progress lines: no streamed text, no accounting
}

// inputReader reads questions: one line, or a """/”' block of lines.
// Lines come from a goroutine so that Ctrl+C can end a wait for input.
// A reader blocked on a terminal stays blocked after stop (the process is
// leaving); one over a finished stream ends.
type inputReader struct {
	lines chan string
	done  chan struct{}
}

func newInputReader(r io.Reader) *inputReader {
	in := &inputReader{lines: make(chan string), done: make(chan struct{})}
	go func() {
		defer close(in.lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for sc.Scan() {
			select {
			case in.lines <- sc.Text():
			case <-in.done:
				return
			}
		}
	}()
	return in
}

func (in *inputReader) stop() { close(in.done) }

func (in *inputReader) line(ctx context.Context) (string, bool) {
	select {
	case l, ok := <-in.lines:
		return l, ok
	case <-ctx.Done():
		return "", false
	}
}

// read returns the next question; false at EOF (a block cut by EOF is
// returned as it is) or when ctx ends.
func (in *inputReader) read(ctx context.Context) (string, bool) {
	first, ok := in.line(ctx)
	if !ok {
		return "", false
	}
	t := strings.TrimSpace(first)
	var delim string
	for _, d := range []string{`"""`, `'''`} {
		if strings.HasPrefix(t, d) {
			delim = d
		}
	}
	if delim == "" {
		return first, true
	}
	rest := strings.TrimPrefix(t, delim)
	if body, ok := strings.CutSuffix(rest, delim); ok {
		return body, true // """one line"""
	}
	var b []string
	if rest != "" {
		b = append(b, rest)
	}
	for {
		l, ok := in.line(ctx)
		if !ok {
			return strings.Join(b, "\n"), ctx.Err() == nil && len(b) > 0
		}
		if body, end := strings.CutSuffix(strings.TrimRight(l, " \t"), delim); end {
			if body != "" {
				b = append(b, body)
			}
			return strings.Join(b, "\n"), true
		}
		b = append(b, l)
	}
}
