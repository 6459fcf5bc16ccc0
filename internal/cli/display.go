package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/massgen/massgen/internal/event"
)

// display prints a run's progress. Plain mode writes one line per
// coordination step to stderr (the final answer alone goes to stdout, so
// pipes get just the answer); automation mode prints only the stable
// KEY: value lines on stdout.
type display struct {
	env        *Env
	automation bool
	silent     bool // --display silent: no progress at all
	ticks      event.TickThrottle
	// dir is the log directory, told once the warnings found before the
	// run started are printed (they come first, as they did on stderr).
	dir string
}

func newDisplay(env *Env, automation bool) *display {
	return &display{env: env, automation: automation}
}

func (d *display) logDir(dir string) { d.dir = dir }

func (d *display) printLogDir() {
	dir := d.dir
	if dir == "" {
		return
	}
	d.dir = ""
	if d.silent && !d.automation {
		return
	}
	if d.automation {
		fmt.Fprintf(d.env.Stdout, "LOG_DIR: %s\n", dir)
		fmt.Fprintf(d.env.Stdout, "STATUS: %s\n", filepath.Join(dir, "status.json"))
	} else {
		fmt.Fprintf(d.env.Stderr, "logs: %s\n", dir)
	}
}

func (d *display) run(sub *event.Subscription) {
	for {
		e, ok := sub.Next(nil)
		if w, isWarning := e.(event.Warning); ok && isWarning {
			// Printed in every mode, as app printed them before it carried
			// them in the run's events.
			fmt.Fprintln(d.env.Stderr, w.Line())
			continue
		}
		d.printLogDir()
		if !ok {
			// Cut for lagging (stderr blocked): say so, or the progress
			// would just stop; the run goes on and its answer still prints.
			if err := sub.Err(); err != nil && !d.automation && !d.silent {
				fmt.Fprintf(d.env.Stderr, "massgen: progress display stopped: %v\n", err)
			}
			return
		}
		if !d.automation && !d.silent && d.ticks.Show(e) {
			d.line(d.env.Stderr, sub.View(), e)
		}
	}
}

// line prints one step in event.Describe's words: the same sentence the
// servers' progress lines and massgen.log use. The run's first and last
// lines are marked as massgen's own; the last sums the run up from its
// view (winner, tally, answers, usage), so the display keeps no state.
func (d *display) line(w io.Writer, v *event.View, e event.Event) {
	text := v.Describe(e)
	switch {
	case text == "":
	case e.Type() == event.TypeRunStarted || e.Type() == event.TypeRunFinished:
		fmt.Fprintf(w, "massgen: %s\n", text) // the error itself is printed once, by Run
	default:
		fmt.Fprintf(w, "  %s\n", text)
	}
}
