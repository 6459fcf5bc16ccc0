package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/store"
)

func newSessionsCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "sessions", Short: "List, show, export or delete the sessions kept in .massgen/sessions.db"}
	var all bool
	list := &cobra.Command{
		Use: "list", Short: "The sessions of this directory, most recent first (10 unless --all)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listSessions(cmd.Context(), env, all) },
	}
	list.Flags().BoolVar(&all, "all", false, "list every session")
	show := &cobra.Command{
		Use: "show ID", Short: "A session's turns: questions, answers, votes, winners, usage", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSession(cmd.Context(), env, args[0], func(st *store.Store, s store.Session, turns []store.Turn) error {
				_, err := fmt.Fprint(env.Stdout, app.ExportMarkdown(s, turns))
				return err
			})
		},
	}
	var format, output string
	export := &cobra.Command{
		Use: "export ID", Short: "Write a session as Markdown or JSON (stdout, or --output FILE)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "md" && format != "json" {
				return usageErr("--format %q: use md or json", format)
			}
			return withSession(cmd.Context(), env, args[0], func(st *store.Store, s store.Session, turns []store.Turn) error {
				data := []byte(app.ExportMarkdown(s, turns))
				if format == "json" {
					var err error
					if data, err = app.ExportJSON(s, turns); err != nil {
						return err
					}
					data = append(data, '\n')
				}
				if output == "" {
					_, err := env.Stdout.Write(data)
					return err
				}
				return os.WriteFile(outputPath(env, output), data, 0o644)
			})
		},
	}
	export.Flags().StringVar(&format, "format", "md", "md or json")
	export.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	del := &cobra.Command{
		Use: "delete ID", Short: "Remove a session from the database (its log directory stays)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSession(cmd.Context(), env, args[0], func(st *store.Store, s store.Session, _ []store.Turn) error {
				if err := st.DeleteSession(cmd.Context(), s.ID); err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "deleted session %s (%s)", s.ID, count(s.Turns, "turn"))
				if s.LogDir != "" {
					fmt.Fprintf(env.Stdout, "; its logs stay in %s", s.LogDir)
				}
				fmt.Fprintln(env.Stdout)
				return nil
			})
		},
	}
	cmd.AddCommand(list, show, export, del)
	return cmd
}

// openStore opens the sessions database of the working directory; reading
// commands do not create one.
func openStore(ctx context.Context, env *Env) (*store.Store, error) {
	path := store.DefaultPath(workDir(env))
	if _, err := os.Stat(path); err != nil {
		return nil, usageErr("no sessions in %s yet (%s does not exist): a run of massgen starts one", workDir(env), path)
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return nil, &exitError{code: ExitExecution, err: err}
	}
	return st, nil
}

func workDir(env *Env) string {
	if env.WorkDir != "" {
		return env.WorkDir
	}
	wd, _ := os.Getwd()
	return wd
}

func withSession(ctx context.Context, env *Env, id string, fn func(*store.Store, store.Session, []store.Turn) error) error {
	st, err := openStore(ctx, env)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := st.Resolve(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return usageErr("%v", err)
	} else if err != nil {
		return usageErr("%v", err)
	}
	turns, err := st.Turns(ctx, s.ID)
	if err != nil {
		return &exitError{code: ExitExecution, err: err}
	}
	return fn(st, s, turns)
}

// listSessions prints the sessions, most recent first: 10, or all.
func listSessions(ctx context.Context, env *Env, all bool) error {
	if _, err := os.Stat(store.DefaultPath(workDir(env))); err != nil {
		fmt.Fprintf(env.Stdout, "no sessions yet in %s\n", workDir(env))
		return nil
	}
	st, err := openStore(ctx, env)
	if err != nil {
		return err
	}
	defer st.Close()
	limit := 10
	if all {
		limit = 0
	}
	list, err := st.Sessions(ctx, limit)
	if err != nil {
		return &exitError{code: ExitExecution, err: err}
	}
	if len(list) == 0 {
		fmt.Fprintln(env.Stdout, "no sessions yet")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tUPDATED\tSTATUS\tTURNS\tFIRST QUESTION")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.ID, s.Updated.Local().Format("2006-01-02 15:04"), s.Status, s.Turns, cut(s.Title, 60))
	}
	tw.Flush()
	if !all && len(list) == limit {
		fmt.Fprintln(env.Stdout, "(the 10 most recent; --all lists every one)")
	}
	fmt.Fprintln(env.Stdout, "resume one with: massgen --session-id ID   (the latest: massgen --continue)")
	return nil
}

// cut is s on one line, at most n runes.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
