package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commandWords are upstream MassGen's subcommands that massgen does not
// have (yet), with what to do instead. A question that is one of them is a
// user typing a command, and running it would bill a whole team for the
// word "logs".
var commandWords = map[string]string{
	// Only other spellings reach here: `massgen logs` is a command.
	"logs":   "past runs are listed by `massgen logs` (list, show, table, open, analyze)",
	"export": "the files of a run are in its log directory, .massgen/massgen_logs/log_<timestamp>/",
	"shares": "sharing runs as gists is not available yet",
	"viewer": "the log viewer is not available yet; a run's status.json and coordination_table.txt are in its log directory",
}

// commandWord reports whether a question is an upstream command word, and
// the error that says what to run instead.
func commandWord(q string) error {
	w := strings.ToLower(strings.TrimSpace(q))
	hint, ok := commandWords[w]
	if !ok {
		return nil
	}
	return usageErr("`massgen %s` is an upstream MassGen command that massgen does not have: %s.\n"+
		"  To ask it as a question, put -- before it: massgen -- %s", w, hint, q)
}

// upstreamFlags are upstream MassGen's top-level flags (v0.1.12, reference
// §5.1). Those massgen can honour map to its own commands; the others fail
// with a message naming what to use instead, never a bare "unknown flag".
type upstreamFlags struct {
	listExamples, strict, asJSON, noDisplay                    bool
	example, validate                                          string
	sessionID                                                  string
	cont, listSessions, all, selectCfg, init, setup, rate      bool
	quickstart                                                 bool
	showSchema, skipValidation, strictValidation, listBackends bool
	flags                                                      *pflag.FlagSet
}

// laterFlag is a flag of later upstream versions (reference §5.2): value
// says whether it takes one (so the parser consumes it), note whether the
// run goes on with a note on stderr (the flag asks for nothing massgen does
// differently) rather than stop with what to use instead.
type laterFlag struct {
	name  string
	value bool
	note  bool
	do    string
}

var laterFlags = func() []laterFlag {
	web := "this part of upstream's web UI is not available: `massgen --web` opens massgen's Web UI (runs live, " +
		"past runs, follow-ups; docs/webui.md), and the Textual TUI is not served in a browser"
	quick := "this form of the config generator is not available (--generate-config PATH takes only --config-backend, " +
		"--config-model and --config-agents): `massgen quickstart --yes --agents N --model M --no-run --output PATH` " +
		"writes a config without asking (massgen quickstart --help)"
	return []laterFlag{
		{name: "web-review", do: web}, {name: "web-quickstart", do: web},
		{name: "textual-serve", do: web}, {name: "textual-serve-port", value: true, do: web},
		{name: "headless", do: quick}, {name: "generate-config", value: true, do: quick},
		{name: "config-backend", value: true, do: quick}, {name: "config-model", value: true, do: quick},
		{name: "config-agents", value: true, do: quick}, {name: "config-agent-id", value: true, do: quick},
		{name: "config-docker", do: quick}, {name: "config-context-path", value: true, do: quick},
		{name: "quickstart-agent", value: true, do: quick},
		{name: "setup-skills", do: "skills are not available yet"},
		{name: "setup-docker", do: "massgen does not build upstream's Docker images: `docker pull massgen/mcp-runtime:latest`, " +
			"or name any image in command_line_docker_image (docker mode pulls it at an agent's first command when it can)"},
		{name: "inbox-dir", value: true, do: "mid-run steering is not available yet"},
		{name: "step", do: "single-step runs are not available yet"},
		{name: "session-dir", value: true, do: "single-step runs are not available yet; sessions are resumed with --continue or --session-id"},
		{name: "save-streaming-buffers", note: true, do: "each agent's streamed output is always kept in agent_outputs/ in the log directory"},
		{name: "logfire", do: "Logfire tracing is not available: massgen.log and coordination_events.jsonl in the log directory record the run"},
		{name: "no-session-registry", note: true, do: "sessions live in .massgen/sessions.db; --no-logs writes neither logs nor sessions"},
		{name: "skip-agent-selector", note: true, do: "massgen has no agent selector"},
		{name: "schema-backend", value: true, do: "the schema printer is not available yet: docs/configuration.md lists the keys"},
		{name: "with-examples", do: "the schema printer is not available yet: docs/configuration.md lists the keys"},
	}
}()

func (u *upstreamFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	u.flags = fl
	for _, f := range laterFlags {
		if f.value {
			fl.String(f.name, "", "")
		} else {
			fl.Bool(f.name, false, "")
		}
		_ = fl.MarkHidden(f.name)
	}
	hide := func(names ...string) {
		for _, n := range names {
			_ = fl.MarkHidden(n)
		}
	}
	fl.BoolVar(&u.listExamples, "list-examples", false, "list the shipped example configs (massgen examples)")
	fl.StringVar(&u.example, "example", "", "print an example config (massgen examples NAME)")
	fl.StringVar(&u.validate, "validate", "", "check a config file and exit (massgen config validate FILE)")
	fl.BoolVar(&u.strict, "strict", false, "with --validate: treat ignored features as errors")
	fl.BoolVar(&u.asJSON, "json", false, "with --validate: print the result as JSON")
	fl.BoolVar(&u.noDisplay, "no-display", false, "plain progress lines (--display plain)")
	fl.BoolVar(&u.cont, "continue", false, "resume the latest session: the question (or interactive mode) sees its turns")
	fl.StringVar(&u.sessionID, "session-id", "", "resume this session (massgen sessions list shows them)")
	fl.BoolVar(&u.listSessions, "list-sessions", false, "list the 10 most recent sessions (--all: every one)")
	fl.BoolVar(&u.all, "all", false, "with --list-sessions: every session")
	fl.BoolVar(&u.selectCfg, "select", false, "")
	fl.BoolVar(&u.init, "init", false, "build a config by use case (massgen init)")
	fl.BoolVar(&u.setup, "setup", false, "store API keys (massgen setup)")
	fl.BoolVar(&u.quickstart, "quickstart", false, "pick a team and start (massgen quickstart)")
	fl.BoolVar(&u.rate, "rate-limit", false, "")
	fl.BoolVar(&u.showSchema, "show-schema", false, "")
	fl.BoolVar(&u.skipValidation, "skip-validation", false, "")
	fl.BoolVar(&u.strictValidation, "strict-validation", false, "")
	fl.BoolVar(&u.listBackends, "list-backends", false, "")
	hide("list-examples", "example", "validate", "strict", "json", "no-display", "all",
		"select", "init", "setup", "quickstart", "rate-limit", "show-schema", "skip-validation", "strict-validation", "list-backends")
}

// unavailable names, for each upstream flag massgen cannot honour yet, what
// to use instead.
func (u *upstreamFlags) unavailable() error {
	for _, f := range []struct {
		set      bool
		flag, do string
	}{
		{u.selectCfg, "--select", "the interactive config picker is not available yet: list the configs with `massgen examples` and pass --config @examples/NAME"},
		{u.rate, "--rate-limit", "rate_limits.yaml is not read: set requests_per_minute and tokens_per_minute in an agent's backend instead"},
		{u.showSchema, "--show-schema", "the schema printer is not available yet: docs/configuration.md lists the keys, and `massgen config validate FILE` checks a file"},
		{u.skipValidation, "--skip-validation", "massgen always validates; its warnings never stop a run"},
		{u.strictValidation, "--strict-validation", "check the config first with `massgen config validate --strict FILE`"},
		{u.listBackends, "--list-backends", "docs/providers.md lists them; `massgen --backend TYPE --model NAME` runs one"},
	} {
		if f.set {
			return usageErr("%s: %s", f.flag, f.do)
		}
	}
	if u.cont && u.sessionID != "" {
		return usageErr("--continue resumes the latest session and --session-id a chosen one: give one of them")
	}
	if u.all && !u.listSessions {
		return usageErr("--all goes with --list-sessions (or use massgen sessions list --all)")
	}
	for _, f := range laterFlags {
		if !f.note && u.flags != nil && u.flags.Changed(f.name) {
			return usageErr("--%s: %s", f.name, f.do)
		}
	}
	return nil
}

// notes tells stderr about the upstream flags a run accepts although they
// change nothing here, so that nobody believes they took effect.
func (u *upstreamFlags) notes(w io.Writer) {
	for _, f := range laterFlags {
		if f.note && u.flags != nil && u.flags.Changed(f.name) {
			fmt.Fprintf(w, "note: --%s: %s\n", f.name, f.do)
		}
	}
}

// upstreamCommand turns upstream's --setup, --quickstart and --init
// anywhere before "--" into massgen's commands, so that the command's own
// flags follow them: massgen --quickstart --yes --agents 2 is
// massgen quickstart --yes --agents 2.
//
// Upstream's --generate-config PATH [--config-backend B] [--config-model M]
// [--config-agents N] is massgen quickstart --yes --no-run --output PATH
// [--backend B] [--model M] [--agents N].
func upstreamCommand(args []string) []string {
	words := map[string]string{"--setup": "setup", "--quickstart": "quickstart", "--init": "init"}
	for i, a := range args {
		if a == "--" {
			break
		}
		if w, ok := words[a]; ok {
			return append([]string{w}, append(append([]string{}, args[:i]...), args[i+1:]...)...)
		}
	}
	return generateConfig(args)
}

func generateConfig(args []string) []string {
	renamed := map[string]string{"--generate-config": "--output", "--config-backend": "--backend",
		"--config-model": "--model", "--config-agents": "--agents"}
	var out []string
	found := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		name, value, eq := strings.Cut(a, "=")
		if name == "--config-agent-id" || name == "--config-docker" || name == "--config-context-path" {
			return args // not available: the root command says what to use instead
		}
		to, ok := renamed[name]
		if !ok {
			out = append(out, a)
			continue
		}
		found = found || name == "--generate-config"
		if !eq {
			if i+1 >= len(args) {
				return args // let the parser say the value is missing
			}
			i++
			value = args[i]
		}
		out = append(out, to, value)
	}
	if !found {
		return args
	}
	return append([]string{"quickstart", "--yes", "--no-run"}, out...)
}

// mapped runs the upstream flags massgen has an equivalent for, through the
// very commands that equivalent names; done reports whether one ran.
func (u *upstreamFlags) mapped(root *cobra.Command) (done bool, err error) {
	if u.setup || u.quickstart || u.init { // only when upstreamCommand did not see them
		return true, usageErr("--setup, --quickstart and --init come first: massgen --setup, or massgen setup")
	}
	switch {
	case u.validate != "":
		validate, _, err := root.Find([]string{"config", "validate"})
		if err != nil {
			return true, err
		}
		for name, on := range map[string]bool{"json": u.asJSON, "strict": u.strict} {
			if !on {
				continue
			}
			if validate.Flags().Lookup(name) == nil {
				return true, usageErr("--validate does not support --%s yet", name)
			}
			if err := validate.Flags().Set(name, "true"); err != nil {
				return true, err
			}
		}
		return true, validate.RunE(validate, []string{u.validate})
	case u.strict:
		return true, usageErr("--strict goes with --validate FILE (or use `massgen config validate --strict FILE`)")
	case u.asJSON:
		return true, usageErr("--json goes with --validate FILE (or use `massgen config validate --json FILE`)")
	case u.listExamples || u.example != "":
		examples, _, err := root.Find([]string{"examples"})
		if err != nil {
			return true, err
		}
		var args []string
		if u.example != "" {
			args = []string{u.example}
		}
		return true, examples.RunE(examples, args)
	}
	return false, nil
}
