package mcpserver

// Where massgen_run's config may come from. Whoever can call the tool — a
// model talking to the user's MCP client, or anyone who reaches the HTTP
// endpoint — chooses it, and a config is code: an MCP server's command, a
// command tool, an agent's shell, files shared with the agents, a base_url
// that receives an API key, ${VAR}s read from the environment. So by
// default a call may name only:
//
//   - @examples/NAME (or an example's bare name): the shipped examples;
//   - a *.yaml or *.yml file of the server's ConfigDir (--config-dir),
//     the user's own teams: symbolic links must stay inside it;
//   - a config written in the call (YAML text): a team of models only,
//     refused when it would reach the machine (inlineRefusal);
//   - nothing: the server's own default (--config, or discovery).
//
// Any other name is refused before it is opened, statted or resolved,
// with the flag that lifts the rule (--allow-config-paths). Once a file
// beyond those is read (the flag given), its errors are reduced to their
// positions: a config diagnostic may quote the file ("got string
// "SECRET=…""), and the file may be /proc/self/environ.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/massgen/massgen/examples"
	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/provider"
)

// AllowConfigPathsFlag is the flag of massgen mcp that sets
// Options.AllowConfigPaths, named in refusals.
const AllowConfigPathsFlag = "--allow-config-paths"

// maxInlineConfig bounds a config written in a call.
const maxInlineConfig = 256 << 10

// inlineName names a config written in a call in its diagnostics.
const inlineName = "(inline config)"

// source is the team a call's config argument chose.
type source struct {
	config string // for app.Request.Config ("" with yaml: or the default)
	yaml   []byte // a config written in the call
	// shown is false when the config's errors may quote what the caller
	// must not read (a file beyond the allowed ones, an inline config's
	// ${VAR}s): they are reduced to positions (withhold).
	shown bool
}

// isInline reports whether a config argument is YAML text rather than a
// name: several lines, or a flow mapping ({agent: …}).
func isInline(arg string) bool {
	return strings.Contains(arg, "\n") || strings.HasPrefix(strings.TrimSpace(arg), "{")
}

// source resolves a call's config argument.
func (s *Server) source(arg string) (source, error) {
	switch {
	case arg == "":
		return source{config: s.o.Config, shown: true}, nil // the operator's
	case isInline(arg):
		return s.inline(arg)
	case strings.HasPrefix(arg, "@examples/"):
		return source{config: arg, shown: true}, nil
	}
	if p, ok, err := s.inConfigDir(arg); err != nil || ok {
		return source{config: p, shown: true}, err
	}
	// An example's exact name, folders included (basic/multi/…): only
	// the embedded names match, so this never reaches a file.
	if name := strings.TrimSuffix(arg, ".yaml"); slices.Contains(examples.Names(), name) {
		if !s.o.AllowConfigPaths || !s.fileExists(arg) {
			return source{config: "@examples/" + name, shown: true}, nil
		}
	}
	if s.o.AllowConfigPaths {
		return source{config: arg}, nil
	}
	return source{}, s.refusal(arg)
}

// fileExists reports whether arg names a file of the working directory
// (with --allow-config-paths, a file wins over an example's bare name).
func (s *Server) fileExists(arg string) bool {
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.env.WorkDir, p)
	}
	_, err := os.Stat(p)
	return err == nil
}

// refusal is the error for a config name beyond the allowed ones. It does
// not depend on whether the file exists: nothing was looked up.
func (s *Server) refusal(arg string) error {
	where := "the server has no --config-dir"
	if s.o.ConfigDir != "" {
		where = "the server's --config-dir has no such *.yaml file"
	}
	return fmt.Errorf("config %q is refused: massgen_run takes @examples/NAME (massgen_examples lists them), "+
		"a file of the server's --config-dir by its name, or a config written as YAML text; %s. "+
		"To let callers name any file, the user must start massgen mcp with %s", arg, where, AllowConfigPathsFlag)
}

// inConfigDir finds arg in the config directory: a relative name (NAME,
// NAME.yaml, NAME.yml, or sub/NAME…) or an absolute path inside it. It is
// looked up through an os.Root: a name with "..", or a symbolic link
// leading out of the directory, never reaches the file it points at.
func (s *Server) inConfigDir(arg string) (string, bool, error) {
	if s.o.ConfigDir == "" {
		return "", false, nil
	}
	dir, err := filepath.Abs(s.o.ConfigDir)
	if err != nil {
		return "", false, err
	}
	name := arg
	if filepath.IsAbs(name) {
		rel, err := filepath.Rel(dir, filepath.Clean(name))
		if err != nil || !filepath.IsLocal(rel) {
			return "", false, nil
		}
		name = rel
	}
	if !filepath.IsLocal(name) {
		return "", false, nil
	}
	candidates := []string{name + ".yaml", name + ".yml"}
	switch filepath.Ext(name) {
	case ".yaml", ".yml":
		candidates = []string{name}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", false, fmt.Errorf("the server's --config-dir cannot be read: %v", unwrapPath(err))
	}
	defer root.Close()
	for _, c := range candidates {
		st, err := root.Stat(c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			// An escape ("path escapes from parent"), a loop, a permission.
			return "", false, fmt.Errorf("config %q is refused: in the server's --config-dir, it leads outside the directory "+
				"(a symbolic link must be relative and stay inside it) or cannot be read", arg)
		case !st.Mode().IsRegular():
			return "", false, fmt.Errorf("config %q is not a regular file", arg)
		}
		return filepath.Join(dir, c), true, nil
	}
	return "", false, nil
}

func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// inline checks a config written in the call. It is parsed here with an
// environment that is empty and watched: a ${VAR} would put a secret of
// the server's environment into the config, where an error message or
// the team's answer could return it.
func (s *Server) inline(arg string) (source, error) {
	if len(arg) > maxInlineConfig {
		return source{}, fmt.Errorf("the config text is %d bytes; at most %d are accepted", len(arg), maxInlineConfig)
	}
	var read []string
	getenv := func(k string) string {
		if !slices.Contains(read, k) {
			read = append(read, k)
		}
		return ""
	}
	cfg, err := config.Parse([]byte(arg), inlineName, getenv)
	src := source{yaml: []byte(arg), shown: len(read) == 0}
	if s.o.AllowConfigPaths {
		return src, nil // app parses it again, with the environment
	}
	if len(read) > 0 {
		return source{}, fmt.Errorf("the config text reads environment variables (%s): an inline config may not; "+
			"provider keys come from the server's environment anyway. Put the config in the server's --config-dir, "+
			"or the user may start massgen mcp with %s", strings.Join(read, ", "), AllowConfigPathsFlag)
	}
	if err != nil {
		return source{}, fmt.Errorf("invalid config: %w", err) // the caller's own text
	}
	if why := inlineRefusal(cfg); len(why) > 0 {
		return source{}, fmt.Errorf("the config text is refused: an inline config is a team of models only; it may not "+
			"run commands or tools on this machine, share its files, reach another endpoint or read the environment (%s). "+
			"Put the config in the server's --config-dir, or the user may start massgen mcp with %s",
			strings.Join(why, "; "), AllowConfigPathsFlag)
	}
	return src, nil
}

// What an inline config may set: everything else that is set refuses it.
// The lists name what is allowed, not what is not, so that a setting added
// to the config package later is refused until someone decides it is safe.
var (
	inlineConfigFields  = []string{"Path", "Agents", "Orchestrator", "UI", "Raw", "Warnings"}
	inlineAgentFields   = []string{"ID", "SystemMessage", "Backend", "Line"}
	inlineBackendFields = []string{"Type", "Model", "Stream", "Params", "Sim", "Line", "RequestsPerMinute", "TokensPerMinute",
		"AllowedTools", "ExcludeTools", "Extra"} // Extra: provider-side tools only (below)
	inlineOrchFields = []string{"VotingSensitivity", "AnswerNovelty", "MaxNewAnswersPerAgent", "UnlimitedAnswers",
		"TimeoutSeconds", "AgentTurnTimeoutSeconds", "PresentationGraceSeconds", "MaxOrchestrationRestarts", "RestartPolicy",
		"IndependentFirstAnswer", "MaxCostUSD", "MaxTotalTokens", "WaitForFirstAnswers", "FailureBudget",
		"SkipCoordinationRounds", "PlanningMode", "PlanningInstruction", "StreamIdleTimeoutSeconds", "Extra",
		// v0.1.73's coordination rules: how the team decides, nothing of the machine
		"FirstRoundTimeoutSeconds", "LaterRoundTimeoutSeconds", "RoundGraceSeconds", "FairnessEnabled", "FairnessLeadCap",
		"ChecklistGated", "VotingThreshold", "ChecklistCriteria", "GenerateCriteria", "MinCriteria", "MaxCriteria",
		"MaxMidstreamInjections", "DeferPeerUpdates", "NoUpdatesBeforeChecklist", "Personas"}
	inlineOrchExtra = []string{"coordination", "debug_final_answer"}
	// yamlKeys names the refused fields as a config writes them.
	yamlKeys = map[string]string{"APIKey": "api_key", "APIKeyUnsetVar": "api_key", "BaseURL": "base_url",
		"CustomTools": "custom_tools", "MCPServers": "mcp_servers", "Cwd": "cwd", "ContextPaths": "context_paths",
		"CommandLine": "enable_mcp_command_line", "SnapshotStorage": "snapshot_storage",
		"AgentTemporaryWorkspace": "agent_temporary_workspace", "Extra": "extra keys", "Scenario": "scenario"}
)

// inlineRefusal lists what an inline config sets beyond a team of models.
func inlineRefusal(cfg *config.Config) []string {
	var why []string
	refuse := func(path, key string) {
		if k, ok := yamlKeys[key]; ok {
			key = k
		}
		why = append(why, path+key)
	}
	for _, f := range setFields(cfg, inlineConfigFields) {
		if f == "Extra" {
			for _, k := range sortedKeys(cfg.Extra) {
				refuse("", k)
			}
			continue
		}
		refuse("", f)
	}
	for i, a := range cfg.Agents {
		at := fmt.Sprintf("agents[%d].", i)
		for _, f := range setFields(&a, inlineAgentFields) {
			refuse(at, f)
		}
		b := a.Backend
		for _, f := range setFields(&b, inlineBackendFields) {
			refuse(at+"backend.", f)
		}
		for _, k := range sortedKeys(b.Extra) {
			if !provider.SupportsBuiltin(b.Type, k) { // enable_web_search, …: the provider's own tools
				refuse(at+"backend.", k)
			}
		}
		if b.Sim != nil && b.Sim.Scenario != "" {
			refuse(at+"backend.", "Scenario") // a file; an inline scenario is fine
		}
	}
	o := cfg.Orchestrator
	for _, f := range setFields(&o, inlineOrchFields) {
		refuse("orchestrator.", f)
	}
	for _, k := range sortedKeys(o.Extra) {
		if !slices.Contains(inlineOrchExtra, k) {
			refuse("orchestrator.", k)
		}
	}
	return why
}

// setFields lists the exported fields of *v that are set (non-zero, or
// non-empty for maps and slices) and not in allowed.
func setFields(v any, allowed []string) []string {
	rv := reflect.ValueOf(v).Elem()
	var out []string
	for i := range rv.NumField() {
		f, fv := rv.Type().Field(i), rv.Field(i)
		if !f.IsExported() || slices.Contains(allowed, f.Name) {
			continue
		}
		switch fv.Kind() {
		case reflect.Map, reflect.Slice:
			if fv.Len() == 0 {
				continue
			}
		default:
			if fv.IsZero() {
				continue
			}
		}
		out = append(out, f.Name)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// withhold reduces a config error whose details the caller may not read
// to where the errors are: a diagnostic may quote the file.
func withhold(err error, name string) error {
	if app.KindOf(err) != app.KindConfig {
		return err
	}
	what := "it"
	if ds, ok := errors.AsType[config.Diagnostics](err); ok {
		var at []string
		for _, d := range ds.Errors() {
			if d.Line > 0 {
				at = append(at, fmt.Sprintf("%d:%d", d.Line, d.Col))
			}
		}
		what = fmt.Sprintf("%d error(s)", len(ds.Errors()))
		if len(at) > 0 {
			what += " at " + strings.Join(at, ", ")
		}
	}
	if name == inlineName {
		return fmt.Errorf("invalid config text: %s; the details are not sent to MCP clients, since they could quote "+
			"the environment variables it reads", what)
	}
	return fmt.Errorf("invalid config %s: %s; the details are not sent to MCP clients, since they could quote the file. "+
		"The user can see them with `massgen --validate --config %s`", name, what, name)
}
