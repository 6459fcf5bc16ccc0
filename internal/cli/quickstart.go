package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"charm.land/huh/v2"
	"github.com/spf13/cobra"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/provider"
)

// teamOptions are the flags quickstart and init share: the team, where the
// config goes, and whether to run it.
type teamOptions struct {
	yes, force, noRun bool
	agents            int
	models            []string
	backend           string
	reasoning         string
	output            string
	useCase           string // init only
	// upstream's spellings (massgen --quickstart --headless --config X):
	// --config names the file written (its base name under .massgen/, or
	// the exact path with --headless), --headless is --yes --no-run.
	configName string
	headless   bool
}

func (o *teamOptions) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVarP(&o.yes, "yes", "y", false, "ask nothing: use the flags and the defaults")
	fl.IntVar(&o.agents, "agents", 0, "number of agents, 1 to 5 (default 3, or one per --model)")
	fl.StringArrayVar(&o.models, "model", nil, "model of the next agent (repeatable; one --model is used for every agent)")
	fl.StringVar(&o.backend, "backend", "", "backend type for every agent (default: inferred from each model; sim runs the built-in simulator)")
	fl.StringVar(&o.reasoning, "reasoning-effort", "", "reasoning effort for GPT-5 models: "+strings.Join(app.ReasoningEfforts, ", ")+" (default medium)")
	fl.StringVar(&o.output, "output", "", "where to write the config (default .massgen/config.yaml, which massgen reads when given no --config)")
	fl.BoolVar(&o.force, "force", false, "replace the config file if it exists")
	fl.BoolVar(&o.noRun, "no-run", false, "write the config and stop, instead of starting massgen on it")
	fl.StringVar(&o.configName, "config", "", "upstream's name for the file written: NAME (.massgen/NAME.yaml), or the exact path with --headless")
	fl.BoolVar(&o.headless, "headless", false, "upstream's --headless: --yes --no-run")
	_ = fl.MarkHidden("config")
	_ = fl.MarkHidden("headless")
}

// upstreamOutput applies upstream's --config and --headless to o.
func (o *teamOptions) upstreamOutput() error {
	if o.headless {
		o.yes, o.noRun = true, true
	}
	name := strings.TrimSpace(o.configName)
	switch {
	case name == "":
	case o.output != "":
		return usageErr("--config and --output both name the file to write: give one")
	case o.headless:
		o.output = name
	default:
		base := filepath.Base(name)
		if base == "." || base == ".." || base == "/" {
			base = "config.yaml"
		}
		if filepath.Ext(base) == "" {
			base += ".yaml"
		}
		o.output = filepath.Join(".massgen", base)
	}
	return nil
}

func newQuickstartCmd(env *Env) *cobra.Command {
	var o teamOptions
	cmd := &cobra.Command{
		Use:   `quickstart ["question"]`,
		Short: "Pick a team (how many agents, which models), write .massgen/config.yaml and start massgen on it",
		Long: `Build a team: how many agents (1 to 5), and a model for each from the catalogue
(providers whose API key is set first; run massgen setup to add keys), with a
reasoning effort for GPT-5 models. The config is written to .massgen/config.yaml,
which massgen reads by default, then massgen starts: on the question if one is
given, else in interactive mode. For scripts:

  massgen quickstart --yes --agents 3 --model gpt-5 --model claude-sonnet-4 --model gemini-2.5-pro
  massgen quickstart --yes --backend sim --no-run`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return buildTeam(cmd.Context(), env, o, "quickstart", args)
		},
	}
	o.register(cmd)
	return cmd
}

// buildTeam is quickstart and init: the team from the flags or the
// questions, the config written, then (unless --no-run) massgen run on it
// through the root command, as `massgen --config PATH [question]`.
func buildTeam(ctx context.Context, env *Env, o teamOptions, generator string, question []string) error {
	if err := o.upstreamOutput(); err != nil {
		return err
	}
	getenv, err := app.LoadEnv(env.app())
	if err != nil {
		return err
	}
	choices, err := app.ModelChoices(getenv)
	if err != nil {
		return err
	}
	path := o.output
	if path == "" {
		path = filepath.Join(".massgen", "config.yaml")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.WorkDir, path)
	}
	var agents []app.AgentSpec
	switch {
	case o.yes:
		agents, err = teamFromFlags(choices, o)
	case isTerminal(env.Stdin) && isTerminal(env.Stdout):
		if err := confirmReplace(env, path, &o.force); err != nil {
			return err
		}
		agents, err = askTeam(env, choices, &o, generator == "init", path)
	default:
		return usageErr("no terminal to ask on: pass --yes with the team as flags (massgen %s --yes --agents 3 --model gpt-5)", generator)
	}
	if err != nil {
		return err
	}
	data, err := app.ConfigYAML(agents, o.useCase, generator)
	if err != nil {
		return err
	}
	if err := app.WriteConfig(path, data, o.force); err != nil {
		return err
	}
	wrote := fmt.Sprintf("Wrote %s (%s: %s).", path, count(len(agents), "agent"), describeTeam(agents))
	fmt.Fprintln(env.Stdout, wrote)
	for _, a := range agents {
		s, _ := provider.Lookup(a.Backend)
		if !hasAnyKey(s.KeyEnv, getenv) {
			fmt.Fprintf(env.Stdout, "note: %s needs %s, which is not set: run massgen setup first.\n", a.Model, strings.Join(s.KeyEnv, " or "))
		}
	}
	if o.noRun {
		fmt.Fprintf(env.Stdout, "Run it: massgen --config %s \"your question\"\n", path)
		return nil
	}
	args := append([]string{"--config", path}, question...)
	withNote := *env
	withNote.welcome = wrote + " It is the team of this session; run it again with massgen --config " + path
	env = &withNote
	root := newRoot(ctx, env, args)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	return root.ExecuteContext(ctx)
}

func hasAnyKey(names []string, getenv func(string) string) bool {
	return len(names) == 0 || slices.ContainsFunc(names, func(k string) bool { return getenv(k) != "" })
}

func describeTeam(agents []app.AgentSpec) string {
	var parts []string
	for _, a := range agents {
		s := a.Model
		if s == "" {
			s = a.Backend
		}
		if a.Reasoning != "" {
			s += " (" + a.Reasoning + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// confirmReplace asks, before any other question, whether an existing
// config may be replaced, so that nobody answers them all for nothing.
func confirmReplace(env *Env, path string, force *bool) error {
	if _, err := os.Stat(path); err != nil || *force {
		return nil
	}
	if err := runForm(huh.NewForm(huh.NewGroup(huh.NewConfirm().
		Title(path+" exists. Replace it?").
		Affirmative("Replace").Negative("Keep it").Value(force))), env); err != nil {
		return err
	}
	if !*force {
		return usageErr("kept %s: pass --output PATH to write the new config elsewhere", path)
	}
	return nil
}

var simModels = []string{"sim-alpha", "sim-beta", "sim-gamma", "sim-delta", "sim-epsilon"}

// teamFromFlags is the team of --agents, --model, --backend and
// --reasoning-effort, with defaults for what they leave out.
func teamFromFlags(choices []app.ModelChoice, o teamOptions) ([]app.AgentSpec, error) {
	n := o.agents
	switch {
	case n == 0 && len(o.models) > 1:
		n = len(o.models)
	case n == 0:
		n = 3
	}
	if n < 1 || n > 5 {
		return nil, usageErr("--agents takes 1 to 5, not %d", n)
	}
	if o.backend != "" {
		if _, ok := provider.Lookup(o.backend); !ok {
			return nil, usageErr("unknown --backend %q: one of %s", o.backend, strings.Join(provider.Runnable(), ", "))
		}
	}
	if o.reasoning != "" && !slices.Contains(app.ReasoningEfforts, o.reasoning) {
		return nil, usageErr("--reasoning-effort takes %s, not %q", strings.Join(app.ReasoningEfforts, ", "), o.reasoning)
	}
	models := o.models
	switch {
	case len(models) == 0 && o.backend == "sim":
		models = simModels[:n]
	case len(models) == 0 && o.backend != "":
		i := slices.IndexFunc(choices, func(c app.ModelChoice) bool { return c.Backend == o.backend })
		if i < 0 {
			return nil, usageErr("--backend %s: give the model with --model", o.backend)
		}
		models = []string{choices[i].Model}
	case len(models) == 0:
		i := slices.IndexFunc(choices, func(c app.ModelChoice) bool { return c.HasKey && c.Backend != "sim" })
		if i < 0 {
			return nil, usageErr("no API key is set, so there is no model to choose: run massgen setup, " +
				"give --model NAME, or try the simulator with --backend sim")
		}
		models = []string{choices[i].Model}
	}
	if len(models) == 1 && n > 1 {
		models = slices.Repeat(models, n)
	}
	if len(models) != n {
		return nil, usageErr("%d agents but %d --model: give one --model for all, or one per agent", n, len(models))
	}
	var agents []app.AgentSpec
	for _, m := range models {
		typ := o.backend
		if typ == "" {
			typ = provider.InferType(m)
		}
		if typ == "" {
			return nil, usageErr("cannot tell the backend of model %q: add --backend TYPE", m)
		}
		a := app.AgentSpec{Backend: typ, Model: m}
		if app.NeedsReasoning(typ, m) {
			a.Reasoning = o.reasoning
			if a.Reasoning == "" {
				a.Reasoning = "medium"
			}
		}
		agents = append(agents, a)
	}
	return agents, nil
}

// askTeam asks the team on the terminal: (for init) the use case, the
// number of agents, each agent's model, and GPT-5's reasoning effort.
func askTeam(env *Env, choices []app.ModelChoice, o *teamOptions, withUseCase bool, path string) ([]app.AgentSpec, error) {
	n := 3
	var fields []huh.Field
	if withUseCase {
		var ucOpts []huh.Option[string]
		for _, name := range app.UseCaseNames {
			ucOpts = append(ucOpts, huh.NewOption(app.UseCases[name].Title, name))
		}
		if o.useCase == "" {
			o.useCase = app.UseCaseNames[0]
		}
		fields = append(fields, huh.NewSelect[string]().Title("What is the team for?").Options(ucOpts...).Value(&o.useCase))
	}
	fields = append(fields, huh.NewSelect[int]().
		Title("How many agents?").
		Description("They answer in parallel, read each other's answers, and vote. Config: "+path).
		Options(huh.NewOptions(1, 2, 3, 4, 5)...).Value(&n))
	if err := runForm(huh.NewForm(huh.NewGroup(fields...)), env); err != nil {
		return nil, err
	}
	var opts []huh.Option[app.ModelChoice]
	for _, c := range choices {
		mark := "no key"
		switch {
		case c.Backend == "sim":
			mark = "simulator, no key needed"
		case c.HasKey:
			mark = "key set"
		}
		opts = append(opts, huh.NewOption(fmt.Sprintf("%-24s %-8s %s", c.Model, c.Backend, mark), c))
	}
	picks := make([]app.ModelChoice, n)
	var groups []*huh.Group
	for i := range picks {
		picks[i] = choices[0]
		groups = append(groups, huh.NewGroup(huh.NewSelect[app.ModelChoice]().
			Title(fmt.Sprintf("Model of agent %d of %d", i+1, n)).
			Description("Providers with a key come first; / filters.").
			Options(opts...).Height(12).Value(&picks[i])))
	}
	if err := runForm(huh.NewForm(groups...), env); err != nil {
		return nil, err
	}
	agents := make([]app.AgentSpec, n)
	var efforts []huh.Field
	for i, p := range picks {
		agents[i] = app.AgentSpec{Backend: p.Backend, Model: p.Model}
		if p.Backend == "sim" {
			agents[i].Model = simModels[i]
		}
		if app.NeedsReasoning(p.Backend, p.Model) {
			agents[i].Reasoning = "medium"
			efforts = append(efforts, huh.NewSelect[string]().
				Title(fmt.Sprintf("Reasoning effort of agent %d (%s)", i+1, p.Model)).
				Options(huh.NewOptions(app.ReasoningEfforts...)...).Value(&agents[i].Reasoning))
		}
	}
	if len(efforts) > 0 {
		if err := runForm(huh.NewForm(huh.NewGroup(efforts...)), env); err != nil {
			return nil, err
		}
	}
	return agents, nil
}
