package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/runlog"
)

// newReplayCmd is `massgen replay LOG_DIR`: the run's decisions again, from
// its replay log alone, without any agent.
func newReplayCmd(env *Env) *cobra.Command {
	var quiet, events bool
	cmd := &cobra.Command{
		Use:   "replay LOG_DIR",
		Short: "Replay a run's decisions from its log and check that they reproduce",
		Long: "Reads LOG_DIR/" + runlog.ReplayName + " (the coordination machine's inputs, written before the run acted on\n" +
			"them), feeds them to a fresh machine without asking any agent, and prints every step as a transcript:\n" +
			"the input, the commands it gave, the agents' state. It ends with the winner and tally, and exits 2 at\n" +
			"the first step whose decisions differ from the recorded ones. With --events it prints the run's decision\n" +
			"events instead (answers, votes, failures, the winner, the final answer), derived from the log the way\n" +
			"the run derived them.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return replay(env, args[0], quiet, events)
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the summary")
	cmd.Flags().BoolVar(&events, "events", false, "print the decision events derived from the log instead of the transcript")
	return cmd
}

func replay(env *Env, dir string, quiet, events bool) error {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.WorkDir, dir)
	}
	path := dir
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		path = filepath.Join(dir, runlog.ReplayName)
	}
	f, err := os.Open(path)
	if err != nil {
		return usageErr("cannot replay %s: %v (a run's log directory holds %s)", dir, err, runlog.ReplayName)
	}
	defer f.Close()
	l, err := coord.ReadLog(f)
	if err != nil {
		return usageErr("cannot replay %s: %v", path, err)
	}
	out := env.Stdout
	if events {
		for i, e := range orchestrator.DeriveLog(l) {
			fmt.Fprintln(out, event.Describe(event.Stamped(e, uint64(i+1), time.Time{})))
		}
		quiet = true
	}
	if !quiet {
		fmt.Fprintf(out, "# %s: agents %s\n", path, strings.Join(l.Config.Agents, ", "))
	}
	var last []coord.Command
	d := l.Check(func(_ int, in coord.Input, cmds []coord.Command, m *coord.Machine) {
		last = cmds
		if quiet {
			return
		}
		fmt.Fprintf(out, "> %s\n", coord.DescribeInput(in))
		for _, c := range cmds {
			fmt.Fprintf(out, "  %s\n", coord.DescribeCommand(c))
		}
		fmt.Fprintf(out, "  = %s\n", m.DescribeState())
	})
	if d != nil {
		fmt.Fprintf(out, "replay diverges at step %d (%s): the run recorded\n", d.Step+1, coord.DescribeInput(l.Steps[d.Step].In))
		for _, c := range d.Recorded {
			fmt.Fprintf(out, "  %s\n", coord.DescribeCommand(c))
		}
		return &exitError{code: ExitExecution, err: fmt.Errorf("the replay of %s diverges at step %d of %d", path, d.Step+1, len(l.Steps))}
	}
	summary := fmt.Sprintf("reproduced: %d steps", len(l.Steps))
	var fin *coord.Finish
	for _, c := range last {
		if f, ok := c.(coord.Finish); ok {
			fin = &f
		}
	}
	switch {
	case fin != nil && fin.Winner != "":
		summary += fmt.Sprintf("; %s, winner %s (%s), %s", fin.Status, fin.Winner, fin.How, event.Tally(fin.Tally))
	case fin != nil:
		summary += fmt.Sprintf("; %s: %s", fin.Status, fin.Reason)
	default:
		summary += "; the run had not finished (massgen --continue resumes it from here)"
	}
	if l.Torn {
		summary += "; the log's last line was cut short and is left out"
	}
	fmt.Fprintln(out, summary)
	return nil
}
