package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"charm.land/huh/v2"
	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
)

// setupOptions are `massgen setup`'s flags.
type setupOptions struct {
	local, fromStdin, noCheck bool
	keys                      []string
	checkBaseURL              string // tests: check every key against this server
}

func newSetupCmd(env *Env) *cobra.Command {
	var o setupOptions
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Store API keys in ~/.config/massgen/.env (or ./.env with --local), checking each with the provider",
		Long: `Store provider API keys where massgen reads them: ~/.config/massgen/.env, or ./.env
with --local. The file is kept at mode 0600; its other lines stay as they are and
a key already in it is replaced. Keys are typed hidden and never printed or logged.

Each key is checked with one request that costs nothing (the provider's model
list). A key the provider refuses is not saved; offline, keys are saved
with a note. On a terminal it asks; for scripts:

  massgen setup --key OPENAI_API_KEY=sk-… --key ANTHROPIC_API_KEY=sk-ant-…
  printf 'OPENAI_API_KEY=%s\n' "$KEY" | massgen setup --from-stdin --no-check

A key given with --key is visible to other users in the process list and stays in
your shell history; --from-stdin avoids both.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runSetup(cmd.Context(), env, o) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.local, "local", false, "write ./.env instead of ~/.config/massgen/.env")
	fl.StringArrayVar(&o.keys, "key", nil, "KEY=VALUE to store (repeatable); skips the questions")
	fl.BoolVar(&o.fromStdin, "from-stdin", false, "read KEY=VALUE lines from stdin; skips the questions")
	fl.BoolVar(&o.noCheck, "no-check", false, "do not check the keys with the provider")
	fl.StringVar(&o.checkBaseURL, "check-base-url", "", "check every key against this base URL (tests)")
	_ = fl.MarkHidden("check-base-url")
	cmd.AddCommand(newSetupCLICmd(env))
	return cmd
}

func runSetup(ctx context.Context, env *Env, o setupOptions) error {
	path, err := setupPath(env, o.local)
	if err != nil {
		return err
	}
	var kvs []app.KeyValue
	switch {
	case o.fromStdin || len(o.keys) > 0:
		kvs, err = setupKeysGiven(env, o)
	case isTerminal(env.Stdin) && isTerminal(env.Stdout):
		kvs, err = askKeys(env, path)
	default:
		return usageErr("no terminal to ask on: give the keys as --key OPENAI_API_KEY=… or KEY=VALUE lines with --from-stdin")
	}
	if err != nil {
		return err
	}
	if len(kvs) == 0 {
		fmt.Fprintln(env.Stdout, "No keys given; nothing changed.")
		return nil
	}
	var keep []app.KeyValue
	var refused []string
	for _, kv := range kvs {
		note := "saved (not checked: --no-check)"
		if !o.noCheck {
			kp, known := app.LookupKey(kv.Key)
			if !known {
				note = "saved (not checked: no provider in massgen's catalogue reads it)"
			} else {
				c := app.CheckKey(ctx, nil, kp, kv.Value, o.checkBaseURL)
				note = c.Note
				if c.Status == app.KeyInvalid {
					refused = append(refused, kv.Key)
					fmt.Fprintf(env.Stdout, "%s: %s; not saved\n", kv.Key, note)
					continue
				}
			}
		}
		fmt.Fprintf(env.Stdout, "%s: %s\n", kv.Key, note)
		keep = append(keep, kv)
	}
	if len(keep) > 0 {
		if err := app.WriteDotEnv(path, keep); err != nil {
			return &exitError{code: ExitExecution, err: fmt.Errorf("writing %s: %w", path, err)}
		}
		fmt.Fprintf(env.Stdout, "Saved %d key(s) in %s (mode 0600).\n", len(keep), path)
	}
	if len(refused) > 0 {
		return usageErr("the provider refused %s: check the key, or pass --no-check to save it anyway", strings.Join(refused, ", "))
	}
	return nil
}

func setupPath(env *Env, local bool) (string, error) {
	if local {
		return filepath.Join(env.WorkDir, ".env"), nil
	}
	return app.UserDotEnv(env.app())
}

// setupKeysGiven reads the keys of --key and --from-stdin.
func setupKeysGiven(env *Env, o setupOptions) ([]app.KeyValue, error) {
	var kvs []app.KeyValue
	add := func(s string) error {
		k, v, err := app.ParseKeyValue(s)
		if err != nil {
			return err
		}
		kvs = append(kvs, app.KeyValue{Key: k, Value: v})
		return nil
	}
	for _, s := range o.keys {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("--key: %w", err)
		}
	}
	if o.fromStdin {
		sc := bufio.NewScanner(env.Stdin)
		n := 0
		for sc.Scan() {
			n++
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if err := add(line); err != nil {
				return nil, fmt.Errorf("stdin line %d: %w", n, err)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return kvs, nil
}

// askKeys asks which providers to set up, then each key, hidden.
func askKeys(env *Env, path string) ([]app.KeyValue, error) {
	getenv, err := app.LoadEnv(env.app())
	if err != nil {
		return nil, err
	}
	var opts []huh.Option[string]
	for _, k := range app.SetupKeys() {
		label := fmt.Sprintf("%-20s %s", k.Env, strings.Join(k.Backends, ", "))
		if getenv(k.Env) != "" {
			label += "  (set)"
		}
		opts = append(opts, huh.NewOption(label, k.Env))
	}
	var chosen []string
	pick := huh.NewForm(huh.NewGroup(
		huh.NewMultiSelect[string]().
			Title("Which API keys do you want to store?").
			Description("Saved in " + path + " (mode 0600). Space (or x) selects, Enter goes on.").
			Options(opts...).Height(12).Value(&chosen),
	)).WithKeyMap(setupKeyMap())
	if err := runForm(pick, env); err != nil {
		return nil, err
	}
	if len(chosen) == 0 {
		return nil, nil
	}
	values := make([]string, len(chosen))
	var fields []huh.Field
	for i, name := range chosen {
		fields = append(fields, huh.NewInput().
			Title(name).
			Description("Paste the key (hidden). Empty: leave it as it is.").
			EchoMode(huh.EchoModePassword).
			Validate(func(s string) error {
				if strings.ContainsAny(s, "\r\n") {
					return errors.New("a key is one line")
				}
				return nil
			}).
			Value(&values[i]))
	}
	if err := runForm(huh.NewForm(huh.NewGroup(fields...)), env); err != nil {
		return nil, err
	}
	var kvs []app.KeyValue
	for i, name := range chosen {
		if v := strings.TrimSpace(values[i]); v != "" {
			kvs = append(kvs, app.KeyValue{Key: name, Value: v})
		}
	}
	return kvs, nil
}

// runForm runs a huh form on the terminal; Ctrl+C or Esc cancels the command.
// setupKeyMap is huh's, with the multi-select's help naming Space as the
// description does (huh's says only "x toggle", though both keys work).
func setupKeyMap() *huh.KeyMap {
	km := huh.NewDefaultKeyMap()
	km.MultiSelect.Toggle.SetHelp("space/x", "select")
	return km
}

func runForm(f *huh.Form, env *Env) error {
	err := f.WithInput(env.Stdin).WithOutput(env.Stdout).Run()
	if errors.Is(err, huh.ErrUserAborted) {
		return &exitError{code: ExitInterrupted, err: errors.New("cancelled; nothing changed")}
	}
	return err
}
