package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
)

func newLogsCmd(env *Env) *cobra.Command {
	var logDir string
	var limit int
	root := func() string { return app.LogsRoot(workDir(env), logDir) }
	find := func(args []string) (app.PastRun, error) {
		name := ""
		if len(args) > 0 {
			name = args[0]
		}
		if name != "" && !filepath.IsAbs(name) && strings.ContainsRune(name, os.PathSeparator) {
			if st, err := os.Stat(filepath.Join(workDir(env), name)); err == nil && st.IsDir() {
				name = filepath.Join(workDir(env), name)
			}
		}
		return app.FindRun(root(), name)
	}
	list := func(cmd *cobra.Command, args []string) error {
		runs, err := app.PastRuns(root())
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			fmt.Fprintf(env.Stdout, "no runs under %s\n", root())
			return nil
		}
		shown := runs
		if limit > 0 && len(shown) > limit {
			shown = shown[:limit]
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tSTARTED\tSTATUS\tWINNER\tDURATION\tCOST\tQUESTION")
		for _, r := range shown {
			m := r.Status.Meta
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t$%.4f\t%s\n", r.Name, m.StartedAt.Local().Format("2006-01-02 15:04:05"), r.State,
				dash(r.Status.Results.Winner), r.Duration().Round(10*time.Millisecond), r.Status.Results.CostUSD, cut(m.Question, 50))
		}
		tw.Flush()
		if len(shown) < len(runs) {
			fmt.Fprintf(env.Stdout, "(%d of %d runs; --limit 0 lists every one)\n", len(shown), len(runs))
		}
		return nil
	}
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "Past runs in .massgen/massgen_logs: list (the default), show, table, open, analyze",
		Long: `Past runs, newest first, from each run's status.json and coordination_events.jsonl.
RUN is a name from massgen logs list (log_<timestamp>, or log_<timestamp>/turn_<N> for a
session's turns), a unique prefix of it (the timestamp without log_ will do), a directory, or
"latest" (the default).`,
		Args: cobra.NoArgs,
		RunE: list,
	}
	cmd.PersistentFlags().StringVar(&logDir, "log-dir", "", "root of the log directories (default .massgen/massgen_logs)")
	listCmd := &cobra.Command{Use: "list", Short: "Past runs, newest first: question, winner, status, duration, cost", Args: cobra.NoArgs, RunE: list}
	for _, c := range []*cobra.Command{cmd, listCmd} {
		c.Flags().IntVar(&limit, "limit", 20, "show at most this many (0: all)")
	}
	show := &cobra.Command{
		Use: "show [RUN]", Short: "A run's outcome: question, status, winner, votes, usage per agent, final answer, files", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := find(args)
			if err != nil {
				return err
			}
			showRun(env, r)
			return nil
		},
	}
	table := &cobra.Command{
		Use: "table [RUN]", Short: "A run's coordination table (coordination_table.txt)", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := find(args)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(filepath.Join(r.Dir, "coordination_table.txt"))
			if err != nil {
				return usageErr("%s has no coordination table yet (it is written when the run ends): %v", r.Name, err)
			}
			_, err = env.Stdout.Write(data)
			return err
		},
	}
	open := &cobra.Command{
		Use: "open [RUN]", Short: "Print a run's log directory (and open it with xdg-open or open, on a terminal)", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := find(args)
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, r.Dir)
			// Only a person at a terminal wants a window; scripts get the path.
			if isTerminal(env.Stdout) {
				for _, opener := range []string{"xdg-open", "open"} {
					if p, err := exec.LookPath(opener); err == nil {
						return exec.CommandContext(cmd.Context(), p, r.Dir).Start()
					}
				}
			}
			return nil
		},
	}
	analyze := &cobra.Command{
		Use: "analyze [RUN]", Short: "Where a run's time and tokens went: per agent, per phase, wasted work", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := find(args)
			if err != nil {
				return err
			}
			recs, short, err := app.ReadEvents(r.Dir)
			if err != nil {
				return usageErr("%v", err)
			}
			printAnalysis(env, r, app.Analyze(recs))
			if short != "" {
				fmt.Fprintf(env.Stdout, "\nnote: %s\n", short)
			}
			if s := r.Status.Meta.LogsIncomplete; s != "" {
				fmt.Fprintf(env.Stdout, "note: %s\n", s)
			}
			return nil
		},
	}
	cmd.AddCommand(listCmd, show, table, open, analyze)
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func showRun(env *Env, r app.PastRun) {
	s := r.Status
	w := env.Stdout
	fmt.Fprintf(w, "run:       %s\ndir:       %s\nquestion:  %s\nstatus:    %s\nstarted:   %s\nduration:  %s\n",
		r.Name, r.Dir, s.Meta.Question, r.State, s.Meta.StartedAt.Local().Format(time.RFC3339), r.Duration().Round(10*time.Millisecond))
	if s.Results.Winner != "" {
		fmt.Fprintf(w, "winner:    %s (%s)\n", s.Results.Winner, dash(s.Results.WinnerLabel))
	}
	if len(s.Results.Votes) > 0 {
		var parts []string
		for _, id := range s.Coordination.AgentOrder {
			if n := s.Results.Votes[id]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s=%d", id, n))
			}
		}
		fmt.Fprintf(w, "votes:     %s\n", strings.Join(parts, " "))
	}
	if s.Results.Fallback != "" {
		fmt.Fprintf(w, "fallback:  %s\n", s.Results.Fallback)
	}
	if s.Meta.LogsIncomplete != "" {
		fmt.Fprintf(w, "logs:      incomplete: %s\n", s.Meta.LogsIncomplete)
	}
	fmt.Fprintf(w, "usage:     %d input + %d output tokens, $%.4f\n", s.Results.InputTokens, s.Results.OutputTokens, s.Results.CostUSD)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nAGENT\tMODEL\tSTATUS\tANSWERS\tRESTARTS\tFAILURES\tTOKENS IN/OUT\tCOST")
	for _, id := range s.Coordination.AgentOrder {
		a := s.Agents[id]
		model := a.Model
		if a.Simulated {
			model += " (simulated)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d/%d\t$%.4f\n", id, model, a.Status, a.AnswerCount, a.Restarts, a.Failures, a.InputTokens, a.OutputTokens, a.CostUSD)
	}
	tw.Flush()
	if m, _ := filepath.Glob(filepath.Join(r.Dir, "final", "*", "answer.txt")); len(m) > 0 {
		if data, err := os.ReadFile(m[0]); err == nil {
			fmt.Fprintf(w, "\nfinal answer (%s):\n%s\n", m[0], strings.TrimRight(string(data), "\n"))
		}
	} else if s.Results.FinalAnswerPreview != "" {
		fmt.Fprintf(w, "\nfinal answer (preview):\n%s\n", s.Results.FinalAnswerPreview)
	}
	if turns, _ := filepath.Glob(filepath.Join(r.Dir, "turn_*")); len(turns) > 0 {
		fmt.Fprintf(w, "\nlater turns of this session: %d (massgen logs list shows them)\n", len(turns))
	}
}

func printAnalysis(env *Env, r app.PastRun, a app.Analysis) {
	w := env.Stdout
	status := a.Status
	if status == "" {
		status = r.State + " (no run_finished event: the run did not end normally)"
	}
	fmt.Fprintf(w, "run %s: %s\nquestion: %s\nwinner: %s; %s, %s; %s\n", r.Name, status, cut(a.Question, 100), dash(a.Winner),
		count(a.Answers, "answer"), count(a.Votes, "vote"), a.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "tokens: %d input + %d output, $%.4f\n", a.Total.InputTokens, a.Total.OutputTokens, a.Total.CostUSD)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\nper phase:")
	fmt.Fprintln(tw, "phase\ttime\ttokens in\ttokens out\tcost\t")
	for _, p := range a.Phases {
		d := "-"
		if p.Duration > 0 {
			d = p.Duration.Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t$%.4f\t\n", p.Name, d, p.Usage.InputTokens, p.Usage.OutputTokens, p.Usage.CostUSD)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nper agent:")
	fmt.Fprintln(tw, "agent\tturns\trestarted\tfailed\tanswers\tvotes\ttool calls\tbusy\ttokens in\ttokens out\tcost\twasted tokens\twasted time\t")
	for _, ag := range a.Agents {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t$%.4f\t%d\t%s\t\n", ag.Agent, ag.Turns, ag.Restarted, ag.Failed, ag.Answers, ag.Votes,
			ag.ToolCalls, ag.Busy.Round(time.Millisecond), ag.Usage.InputTokens, ag.Usage.OutputTokens, ag.Usage.CostUSD,
			ag.Wasted.InputTokens+ag.Wasted.OutputTokens, ag.WastedFor.Round(time.Millisecond))
	}
	tw.Flush()
	total := a.Total.InputTokens + a.Total.OutputTokens
	wasted := a.Wasted.InputTokens + a.Wasted.OutputTokens
	pct := 0.0
	if total > 0 {
		pct = 100 * float64(wasted) / float64(total)
	}
	fmt.Fprintf(w, "\nwasted work: %d tokens (%.1f%% of all), $%.4f, in turns cancelled by a newer answer, failed or timed out\n",
		wasted, pct, a.Wasted.CostUSD)
}
