package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/redact"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// Command is execute_command: a shell command line run by r, in the
// agent's workspace (or a directory inside it).
func Command(r *sandbox.Runner) tool.Tool {
	type args struct {
		Command string `json:"command"`
		WorkDir string `json:"work_dir"`
	}
	desc := "Run a shell command (sh -c) in your workspace and return its exit code and output. " + r.Describe()
	return fn("execute_command", desc,
		schema([]string{"command"}, map[string][2]string{
			"command":  {"string", "the command line"},
			"work_dir": {"string", "directory inside your workspace to run in (default: the workspace)"},
		}),
		func(ctx context.Context, a args) (string, error) {
			res, err := r.Run(ctx, a.Command, a.WorkDir)
			if err != nil {
				return "", err
			}
			var b strings.Builder
			switch {
			case res.TimedOut:
				b.WriteString("timed out; the command and everything it started were killed\n")
			default:
				fmt.Fprintf(&b, "exit code: %d\n", res.ExitCode)
			}
			// A secret the command printed (a key passed into its Docker
			// container, say) is masked: the model, the events and the
			// logs get what package redact leaves of it (a key-shaped
			// token it was not told of stays: commands print code).
			b.WriteString(redact.Registered(res.Output))
			if res.Truncated > 0 {
				fmt.Fprintf(&b, "\n%s %d more bytes of output left out; redirect it to a file and read parts of it", noteTruncated, res.Truncated)
			}
			if res.Note != "" {
				b.WriteString("\nnote: " + res.Note)
			}
			return b.String(), nil
		})
}
