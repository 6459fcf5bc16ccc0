package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
)

func newInitCmd(env *Env) *cobra.Command {
	var o teamOptions
	cmd := &cobra.Command{
		Use:   `init ["question"]`,
		Short: "Build a config by use case (research, code, Q&A), write .massgen/config.yaml and start massgen on it",
		Long: `Build a config for a kind of work: research (agents that gather, check and cite
facts), code (each agent has a workspace and a sandboxed command line, and is
told to run and test its code), or qa (short, accurate answers). Then the team,
as in massgen quickstart. For scripts:

  massgen init --use-case code --yes --model claude-sonnet-4-5 --no-run`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.useCase != "" {
				if _, ok := app.UseCases[o.useCase]; !ok {
					return usageErr("--use-case takes %s, not %q", strings.Join(app.UseCaseNames, ", "), o.useCase)
				}
			} else if o.yes {
				o.useCase = "research"
			}
			return buildTeam(cmd.Context(), env, o, "init", args)
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.useCase, "use-case", "", "research, code or qa (default research)")
	return cmd
}
