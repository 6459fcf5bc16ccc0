package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/tui"
)

// interactiveTUI is the interactive loop in the full-screen display: one
// display for the whole session, its input page between turns, each turn's
// run view while the team works. Commands are the plain loop's (dispatch);
// what they print and what the turns would print on stderr go into the
// conversation. Ctrl+C cancels the turn under way (it is recorded as
// interrupted); at an empty prompt it leaves, as Ctrl+D and /quit do,
// with exit 0. A SIGTERM (ctx) ends the session with exit 4.
func interactiveTUI(ctx context.Context, env *Env, sess *app.Session, rq app.Request, outputFile string, atRefs bool) error {
	ui := tui.New(tui.Options{Input: env.Stdin, Output: env.Stdout, Context: ctx, Interactive: true})
	held := &heldWriter{}
	defer sess.SetStderr(held)()
	// The earlier turns of a resumed session open the conversation.
	h := sess.History()
	for i := 0; i+1 < len(h); i += 2 {
		if h[i].Role == llm.RoleUser && h[i+1].Role == llm.RoleAssistant {
			ui.Past(h[i].Content, h[i+1].Content)
		}
	}
	if env.welcome != "" {
		ui.Note(env.welcome)
	}
	if info := sess.Info(); info.ID != "" {
		ui.Note(fmt.Sprintf("Session %s: continuing after %s.", info.ID, count(info.Turns, "turn")))
	}
	turn := func(resume bool) error {
		turnCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		rq := questionRequest(env, rq, rq.Question, atRefs)
		rq.Observe = func(sub *event.Subscription, info app.RunInfo) {
			ui.Follow(sub, tui.Run{Timeout: info.Timeout, Cancel: cancel})
		}
		rq.ObserveSkips = event.Bookkeeping
		run := sess.Turn
		if resume {
			run = sess.ResumePending
		}
		out, err := run(turnCtx, rq, true)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var note bytes.Buffer
		held.flush(&note)
		if err == nil && outputFile != "" && out.Result.Status == orchestrator.Completed {
			// --output-file holds the latest answer, as in the plain loop.
			if err := os.WriteFile(outputPath(env, outputFile), []byte(out.Result.Final+"\n"), 0o644); err != nil {
				fmt.Fprintf(&note, "massgen: --output-file: %v\n", err)
			}
		}
		if err != nil && turnCtx.Err() == nil {
			fmt.Fprintf(&note, "massgen: %v\n", strings.TrimSpace(err.Error()))
		}
		if turnCtx.Err() != nil {
			fmt.Fprintln(&note, "The turn was cancelled; it is kept as interrupted and is not in the history.")
		}
		if note.Len() > 0 {
			ui.Note(note.String())
		}
		return nil
	}
	err := func() error {
		if p, ok := sess.Pending(); ok {
			ui.Note(fmt.Sprintf("Resuming interrupted turn %d: %s (its %d accepted answers are kept, not asked for again).",
				p.N, cut(p.Question, 80), len(p.Answers)))
			if err := turn(true); err != nil {
				return err
			}
		}
		for {
			raw, err := ui.Ask(ctx)
			if err != nil {
				if errors.Is(err, tui.ErrClosed) {
					return nil
				}
				return err
			}
			var out bytes.Buffer
			q, quit, err := dispatch(ctx, env, &out, sess, &rq, raw)
			if err != nil {
				fmt.Fprintf(&out, "massgen: %v\n", err)
			}
			if isReset(raw) {
				ui.Clear()
			}
			if out.Len() > 0 {
				ui.Note(out.String())
			}
			if quit {
				return nil
			}
			if q == "" {
				continue
			}
			rq.Question = q
			if err := turn(false); err != nil {
				return err
			}
		}
	}()
	ui.Close()
	if _, uiErr := ui.Wait(); uiErr != nil {
		fmt.Fprintf(env.Stderr, "warning: the terminal display failed (%v); --display plain prints progress lines instead\n", uiErr)
	}
	held.flush(env.Stderr)
	if id := sess.Info().ID; id != "" {
		fmt.Fprintf(env.Stderr, "session: %s, %s in the history (massgen --continue resumes it)\n", id, count(len(sess.History())/2, "turn"))
	}
	if err != nil || ctx.Err() != nil {
		return &exitError{code: ExitInterrupted, err: errors.New("interrupted; the finished turns are kept: massgen --continue resumes")}
	}
	return nil
}

// isReset reports whether raw is the command that forgets the conversation.
func isReset(raw string) bool {
	if strings.HasPrefix(raw, " ") {
		return false
	}
	word, _, _ := strings.Cut(strings.TrimSpace(raw), " ")
	switch strings.ToLower(word) {
	case "/clear", "/reset", "reset", "clear":
		return true
	}
	return false
}
