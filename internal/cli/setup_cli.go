package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
)

// newSetupCLICmd is `massgen setup cli`: the coding-agent CLIs a team's
// claude_code, codex and gemini_cli agents run, installed with npm.
func newSetupCLICmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "cli [claude_code|codex|gemini_cli|copilot ...]",
		Short: "Install the coding-agent CLIs (Claude Code, Codex, Gemini CLI, Copilot) that CLI agents run, with npm",
		Long: `Install the versions of the coding-agent CLIs massgen is tested with — Claude Code
(claude_code), Codex (codex), Gemini CLI (gemini_cli) and GitHub Copilot CLI
(copilot); all of them when none is named — with npm into $XDG_DATA_HOME/massgen/cli (~/.local/share/massgen/cli). A team looks for a CLI's program on PATH
first, then there. Needs npm (Node.js 20 or later).`,
		ValidArgs: app.CLITypes(), // completion; InstallCLIs names them when one is wrong
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := app.InstallCLIs(cmd.Context(), env.Getenv, args, env.Stderr)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "Installed in %s; CLI agents find them there.\n", dir)
			return nil
		},
	}
}
