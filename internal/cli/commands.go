package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/massgen/massgen/examples"
	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/provider"
	"github.com/spf13/cobra"
)

func newConfigCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Work with config files"}
	var asJSON, strict bool
	validate := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a config file; exit 1 when it has errors (with --strict, also warnings)",
		Long: `Check a config file and list every error and warning with its file:line.
Exit 1 when it has errors. With --strict, any warning fails too: a setting this
version ignores (an upstream feature it does not implement yet, an unknown key),
or one it reads with a caveat, means a run would not do exactly what the file asks.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			getenv, err := app.LoadEnv(env.app())
			if err != nil {
				return err
			}
			cfg, err := app.LoadConfig(env.app(), args[0], getenv)
			var diags config.Diagnostics
			ignored := []string{}
			if cfg != nil {
				diags = append(diags, cfg.Warnings...)
				ignored = append(ignored, cfg.IgnoredFeatures()...)
				// A model name the catalogue does not know: the warning a
				// run gives, given before the run.
				for i, a := range cfg.Agents {
					if problem, sugg := provider.ModelWarning(a.Backend.Type, a.Backend.Model, a.Backend.BaseURL, getenv); problem != "" {
						diags = append(diags, config.Diagnostic{Severity: config.Warning, File: cfg.Path, Line: a.Line,
							Key: fmt.Sprintf("agents[%d].backend.model", i), Message: problem, Suggestion: sugg})
					}
				}
			}
			if d, ok := errors.AsType[config.Diagnostics](err); ok {
				diags = append(diags, d...)
			} else if err != nil {
				return err
			}
			errs, warns := len(diags.Errors()), len(diags.Warnings())
			valid := errs == 0 && (!strict || warns == 0)
			if asJSON {
				out := map[string]any{"valid": valid, "strict": strict, "error_count": errs, "warning_count": warns,
					"ignored_features": ignored, "diagnostics": diagJSON(diags)}
				b, _ := json.MarshalIndent(out, "", "  ")
				fmt.Fprintln(env.Stdout, string(b))
			} else {
				for _, d := range diags {
					fmt.Fprintln(env.Stdout, d.String())
				}
				if errs == 0 {
					verdict := "valid"
					if !valid {
						verdict = "not valid under --strict"
					}
					summary := fmt.Sprintf("%s: %s (%s, %s)", args[0], verdict, count(len(cfg.Agents), "agent"), count(warns, "warning"))
					if len(ignored) > 0 {
						summary += "; ignored: " + strings.Join(ignored, ", ")
					}
					fmt.Fprintln(env.Stdout, summary)
				}
			}
			switch {
			case errs > 0:
				return &exitError{code: ExitConfig, err: fmt.Errorf("%s: %d error(s)", args[0], errs)}
			case !valid:
				return &exitError{code: ExitConfig, err: fmt.Errorf("%s: %d warning(s), which --strict counts as errors", args[0], warns)}
			}
			return nil
		},
	}
	validate.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	validate.Flags().BoolVar(&strict, "strict", false, "fail (exit 1) on warnings too, e.g. settings this version ignores")
	cmd.AddCommand(validate)
	return cmd
}

func diagJSON(ds config.Diagnostics) []map[string]any {
	out := []map[string]any{}
	for _, d := range ds {
		sev := "error"
		if d.Severity != config.Error {
			sev = "warning"
		}
		out = append(out, map[string]any{"severity": sev, "file": d.File, "line": d.Line, "column": d.Col,
			"key": d.Key, "message": d.Message, "suggestion": d.Suggestion})
	}
	return out
}

func newSimCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{Use: "sim", Short: "The built-in LLM provider simulator"}
	var addr, scenario string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the simulator (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini) until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := llmsim.Serve(cmd.Context(), addr, scenario, func(format string, a ...any) {
				fmt.Fprintf(env.Stderr, format+"\n", a...)
			})
			if err != nil {
				return &exitError{code: ExitExecution, err: err}
			}
			return nil
		},
	}
	serve.Flags().StringVar(&addr, "addr", "127.0.0.1:8089", "listen address")
	serve.Flags().StringVar(&scenario, "scenario", "", "scenario file (YAML); default: answer, then vote deterministically")
	cmd.AddCommand(serve)
	return cmd
}

func newExamplesCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "examples [NAME]",
		Short: "List the shipped example configs, or print one",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				fmt.Fprintln(env.Stdout, "Example configs (use with --config @examples/NAME):")
				fmt.Fprintln(env.Stdout, "  "+strings.Join(examples.Names(), "\n  "))
				return nil
			}
			_, data, ok := examples.Find(args[0])
			if !ok {
				return usageErr("no example matches %q", args[0])
			}
			_, err := env.Stdout.Write(data)
			return err
		},
	}
}
