package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/provider"
)

// ModelChoice is one model quickstart offers.
type ModelChoice struct {
	Model, Backend string
	// HasKey: the backend's API key is set (environment or .env), or it
	// needs none (the simulator).
	HasKey bool
}

// ModelChoices lists the catalogue's models that massgen can run, the
// providers whose key is set first, then the simulator, then the others.
func ModelChoices(getenv func(string) string) ([]ModelChoice, error) {
	ids, err := provider.ModelIDs(getenv)
	if err != nil {
		return nil, err
	}
	var keyed, sim, rest []ModelChoice
	for _, id := range ids {
		typ := provider.InferType(id)
		s, ok := provider.Lookup(typ)
		if !ok || !s.Native || strings.Contains(id, "/") {
			continue
		}
		c := ModelChoice{Model: id, Backend: typ, HasKey: hasKey(s, getenv)}
		switch {
		case typ == "sim":
			sim = append(sim, c)
		case c.HasKey:
			keyed = append(keyed, c)
		default:
			rest = append(rest, c)
		}
	}
	return slices.Concat(keyed, sim, rest), nil
}

func hasKey(s provider.Spec, getenv func(string) string) bool {
	if len(s.KeyEnv) == 0 {
		return true
	}
	return slices.ContainsFunc(s.KeyEnv, func(k string) bool { return getenv(k) != "" })
}

// NeedsReasoning reports whether a model takes a reasoning effort that
// quickstart asks for (OpenAI's GPT-5 family on the Responses backend).
func NeedsReasoning(backend, model string) bool {
	return backend == "openai" && strings.HasPrefix(strings.ToLower(model), "gpt-5")
}

// ReasoningEfforts are the efforts GPT-5 accepts.
var ReasoningEfforts = []string{"minimal", "low", "medium", "high"}

// AgentSpec is one agent of a generated config.
type AgentSpec struct {
	Backend, Model string
	Reasoning      string // effort for GPT-5 models; "" leaves the provider's default
}

// UseCases are the kinds of team `massgen init` builds, with what their
// agents are told.
var UseCases = map[string]struct {
	Title   string
	Roles   []string // system messages, one per agent, cycled
	Workdir bool     // agents get a workspace and the command line
}{
	"research": {Title: "Research: find, check and cite facts", Roles: []string{
		"You are a careful researcher. Gather the relevant facts, check them against each other, and cite your sources.",
		"You are a critical reviewer. Look for gaps, errors and unsupported claims, and correct them.",
		"You are a synthesiser. Combine what is known into a clear, well-organised answer.",
	}},
	"code": {Title: "Code: write, run and test code in a workspace", Workdir: true, Roles: []string{
		"You are a software engineer. Write working code in your workspace, run it, and test it before you answer.",
		"You are a code reviewer. Read the code, run the tests, and fix bugs and unclear parts.",
		"You are a tester. Write tests for edge cases, run them, and report what fails.",
	}},
	"qa": {Title: "Q&A: short, accurate answers", Roles: []string{
		"You answer questions accurately and concisely. Say so when you are not sure.",
	}},
}

// UseCaseNames lists UseCases in the order the wizard offers them.
var UseCaseNames = []string{"research", "code", "qa"}

// ConfigYAML writes a MassGen config for the agents, with the use case's
// system messages (none for ""), as a commented YAML file.
func ConfigYAML(agents []AgentSpec, useCase, generator string) ([]byte, error) {
	if len(agents) == 0 {
		return nil, usageErr("a team needs at least one agent")
	}
	uc, ok := UseCases[useCase]
	if useCase != "" && !ok {
		return nil, usageErr("unknown use case %q: choose %s", useCase, strings.Join(UseCaseNames, ", "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `massgen %s`", generator)
	if useCase != "" {
		fmt.Fprintf(&b, " for %s", uc.Title)
	}
	b.WriteString(".\n# Run it: massgen --config THIS_FILE \"your question\" (or massgen alone in this directory)\n")
	b.WriteString("agents:\n")
	for i, a := range agents {
		fmt.Fprintf(&b, "  - id: agent_%c\n", 'a'+rune(i))
		b.WriteString("    backend:\n")
		fmt.Fprintf(&b, "      type: %s\n", a.Backend)
		if a.Model != "" {
			fmt.Fprintf(&b, "      model: %s\n", strconv.Quote(a.Model))
		}
		if a.Reasoning != "" {
			fmt.Fprintf(&b, "      reasoning:\n        effort: %s\n", a.Reasoning)
		}
		if uc.Workdir {
			fmt.Fprintf(&b, "      cwd: workspace%d              # a workspace of its own for each run\n", i+1)
			b.WriteString("      enable_mcp_command_line: true  # execute_command, sandboxed in the workspace\n")
		}
		if len(uc.Roles) > 0 {
			fmt.Fprintf(&b, "    system_message: %s\n", strconv.Quote(uc.Roles[i%len(uc.Roles)]))
		}
	}
	b.WriteString("orchestrator:\n  voting_sensitivity: balanced\n")
	b.WriteString("timeout_settings:\n  orchestrator_timeout_seconds: 600\n")
	data := []byte(b.String())
	// What is written must load: a generator bug must not reach the user's
	// first run.
	if _, err := config.Parse(data, "generated config", func(string) string { return "" }); err != nil {
		return nil, fmt.Errorf("internal error: the generated config does not load: %w", err)
	}
	return data, nil
}

// WriteConfig writes a generated config, refusing to replace an existing
// file unless force.
func WriteConfig(path string, data []byte, force bool) error {
	if _, err := os.Stat(path); err == nil && !force {
		return usageErr("%s already exists: pass --force to replace it, or --output PATH to write elsewhere", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
