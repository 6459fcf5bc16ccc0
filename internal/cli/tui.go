package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/charmbracelet/x/term"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/tui"
)

// Display modes (--display). upstream's names map onto them: rich and
// textual are its full-screen displays, --no-display its simple one.
const (
	displayTUI    = "tui"
	displayPlain  = "plain"
	displaySilent = "silent"
)

// chooseDisplay picks the display: --automation is silent (its KEY: value
// lines), an explicit --display or --no-display wins, and otherwise the
// TUI when stdin and stdout are both terminals (a pipe gets plain lines).
func chooseDisplay(env *Env, flag string, noDisplay, automation bool) (string, error) {
	mode := ""
	switch strings.ToLower(strings.TrimSpace(flag)) {
	case "":
	case "tui", "rich", "textual", "rich_terminal", "textual_terminal":
		mode = displayTUI
	case "plain", "simple", "terminal":
		mode = displayPlain
	case "silent":
		mode = displaySilent
	default:
		return "", usageErr("--display %q: use tui, plain or silent (rich and textual are names for tui)", flag)
	}
	switch {
	case automation:
		if mode == displayTUI || mode == displayPlain {
			return "", usageErr("--automation prints only KEY: value lines; it does not go with --display %s", flag)
		}
		return displaySilent, nil
	case noDisplay:
		if mode != "" && mode != displayPlain {
			return "", usageErr("--no-display is plain output; it does not go with --display %s", flag)
		}
		return displayPlain, nil
	case mode != "":
		return mode, nil
	case isTerminal(env.Stdin) && isTerminal(env.Stdout):
		return displayTUI, nil
	}
	return displayPlain, nil
}

// configDisplay is the display the config's ui.display_type asks for when
// no flag chose one: simple and terminal are plain lines, silent is
// silent, and upstream's full-screen names (rich_terminal, its default,
// rich, textual…) are the TUI where the terminal can show it (mode, the
// terminal's choice, is already tui then) and plain lines where it cannot.
// A config that does not load leaves mode as it is: the run reports why.
func configDisplay(env *Env, rq app.Request, mode string) string {
	quiet := *env
	quiet.Stderr = io.Discard
	getenv, err := app.LoadEnv(quiet.app())
	if err != nil {
		return mode
	}
	cfg, err := app.ResolveConfig(quiet.app(), &rq, getenv)
	if err != nil {
		return mode
	}
	switch strings.ToLower(cfg.UI.DisplayType) {
	case "simple", "terminal":
		return displayPlain
	case "silent":
		return displaySilent
	}
	return mode
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// runTUI is runQuestion with the live display. The display owns the
// screen for the run and until the user leaves it; what the run would
// print on stderr meanwhile is held and printed after, with the answer, so
// that the scrollback keeps both.
func runTUI(ctx context.Context, env *Env, rq app.Request, outputFile string, run func(context.Context, *app.Env, app.Request) (*app.Outcome, error)) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	held := &heldWriter{}
	quiet := *env
	quiet.Stderr = held
	ui := tui.New(tui.Options{Input: env.Stdin, Output: env.Stdout, Context: ctx, Cancel: cancel,
		ExitAtEnd: !isTerminal(env.Stdin)})
	var logDir string
	rq.Observe = func(sub *event.Subscription, info app.RunInfo) {
		logDir = info.LogDir
		ui.Follow(sub, tui.Run{Timeout: info.Timeout})
	}
	rq.ObserveSkips = event.Bookkeeping // the TUI shows streamed text; usage comes from the view
	out, err := run(runCtx, quiet.app(), rq)
	_, uiErr := ui.Wait()
	held.flush(env.Stderr)
	if out != nil {
		// The display showed the run, not its warnings: they are printed
		// now, with the answer (finish prints those after the events).
		for _, w := range out.Warnings[:len(out.Warnings)-len(out.LateWarnings)] {
			fmt.Fprintln(env.Stderr, w)
		}
	}
	if uiErr != nil {
		fmt.Fprintf(env.Stderr, "warning: the terminal display failed (%v); --display plain prints progress lines instead\n", uiErr)
	}
	if logDir != "" {
		fmt.Fprintf(env.Stderr, "logs: %s\n", logDir)
	}
	if err != nil {
		return err
	}
	return finish(env, false, outputFile, out)
}

// heldWriter keeps what is written to it until flush.
type heldWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.Write(p)
}

func (h *heldWriter) flush(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, _ = h.buf.WriteTo(w)
}
