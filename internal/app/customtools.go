package app

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/custom"
)

// loadTimeout bounds loading a team's Python tools (importing their files).
const loadTimeout = 2 * time.Minute

// addCustomTools gives each agent the custom tools of its backend. The
// Python tools of the whole team share one runner, started here (so a
// missing function is known before the run) and stopped by t.Close. A tool
// that cannot run — its file, function or Python missing — is still
// offered, answering every call with why, and draws a warning: upstream's
// examples point into the MassGen repository, and a run from elsewhere
// should say what is missing rather than refuse to start.
func (t *team) addCustomTools(cfg *config.Config, workDir string, getenv func(string) string) error {
	dirs := toolDirs(cfg, workDir)
	var specs []custom.PythonSpec
	var owners []int      // specs[i] belongs to t.agents[owners[i]]
	var features []string // and is customToolFeature features[i]
	perAgent := make([][]tool.Tool, len(t.agents))
	for i, a := range t.agents {
		ca := configAgent(cfg, a.ID)
		for _, tc := range ca.Backend.CustomTools {
			name := tc.ToolName()
			timeout := time.Duration(tc.TimeoutSeconds * float64(time.Second))
			if tc.Type == "command" {
				perAgent[i] = append(perAgent[i], t.commandTool(a.ID, name, tc, dirs, workDir, timeout))
				continue
			}
			file, err := findToolFile(tc, dirs)
			if err != nil {
				t.warnings = append(t.warnings, fmt.Sprintf("agent %s: %v", a.ID, err))
				t.drop(customToolFeature(tc, a.ID))
				perAgent[i] = append(perAgent[i], custom.Unavailable(name, tc.Description, err.Error()))
				continue
			}
			specs = append(specs, custom.PythonSpec{Name: name, File: file, Function: tc.Function,
				Description: tc.Description, PresetArgs: tc.PresetArgs, Timeout: timeout})
			owners = append(owners, i)
			features = append(features, customToolFeature(tc, a.ID))
		}
	}
	if len(specs) > 0 {
		tools := t.loadPython(specs, features, workDir, getenv)
		for j, tl := range tools {
			perAgent[owners[j]] = append(perAgent[owners[j]], tl)
		}
	}
	for i := range t.agents {
		if len(perAgent[i]) == 0 {
			continue
		}
		if m := t.cli[t.agents[i].ID]; m != nil {
			m.tools = perAgent[i] // its CLI gets them over MCP (cliagents.go)
			continue
		}
		set, err := t.agents[i].Tools.With(perAgent[i]...)
		if err != nil {
			return usageErr("agent %s: %v", t.agents[i].ID, err)
		}
		t.agents[i].Tools = set
	}
	return nil
}

// loadPython starts the team's runner and loads specs, warning about the
// tools that cannot run and recording them as dropped (features[i] names
// specs[i]). The result has one tool per spec, in order.
func (t *team) loadPython(specs []custom.PythonSpec, features []string, workDir string, getenv func(string) string) []tool.Tool {
	python, err := custom.FindPython(getenv)
	if err != nil {
		t.warnings = append(t.warnings, fmt.Sprintf("custom tools cannot run: %v", err))
		out := make([]tool.Tool, len(specs))
		for i, s := range specs {
			out[i] = custom.Unavailable(s.Name, s.Description, "custom tool "+s.Name+" cannot run: "+err.Error())
		}
		t.drop(features...)
		return out
	}
	t.python = custom.NewPython(python, workDir)
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	defer cancel()
	tools, errs, err := t.python.Load(ctx, specs)
	if err != nil {
		t.warnings = append(t.warnings, fmt.Sprintf("custom tools cannot run: %v", err))
		t.drop(features...)
		return tools
	}
	for i, e := range errs {
		if e != nil {
			t.warnings = append(t.warnings, e.Error())
			t.drop(features[i])
		}
	}
	return tools
}

// customToolFeature is the stable name, in a run's WARNINGS and
// status.json's meta.ignored_features, of a custom tool an agent goes
// without: its tool is offered but answers every call with why.
func customToolFeature(tc config.CustomTool, agent string) string {
	return fmt.Sprintf("custom_tools.%s (agent %s)", tc.Name, agent)
}

// drop records features of the config the team's agents go without, for
// every run of the team to report (runIgnored).
func (t *team) drop(features ...string) {
	for _, f := range features {
		if !slices.Contains(t.dropped, f) {
			t.dropped = append(t.dropped, f)
		}
	}
}

// commandTool makes a `type: command` tool, resolving its executable and
// working directory; one whose executable cannot be found is Unavailable.
func (t *team) commandTool(agentID, name string, tc config.CustomTool, dirs []string, workDir string, timeout time.Duration) tool.Tool {
	argv := slices.Clone(tc.Command)
	if len(argv) == 1 && strings.ContainsAny(argv[0], " \t") {
		if _, err := findFile(argv[0], dirs); err != nil {
			argv = strings.Fields(argv[0]) // "python3 tool.py": a command line, split on spaces (no shell quoting)
		}
	}
	argv = append(argv, tc.Args...)
	exe, err := resolveExecutable(argv[0], dirs)
	if err != nil {
		err = fmt.Errorf("custom tool %s: %w", name, err)
		t.warnings = append(t.warnings, fmt.Sprintf("agent %s: %v", agentID, err))
		t.drop(customToolFeature(tc, agentID))
		return custom.Unavailable(name, tc.Description, err.Error())
	}
	argv[0] = exe
	dir := workDir
	if tc.Cwd != "" {
		dir = tc.Cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(dirs[0], dir)
		}
	}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(tc.Env)) {
		env = append(env, k+"="+tc.Env[k])
	}
	return custom.Command(custom.CommandSpec{Name: name, Description: tc.Description, Argv: argv, Env: env, Dir: dir,
		Parameters: tc.Parameters, Timeout: timeout})
}

// toolDirs are where relative tool paths are looked for: the config
// file's directory, then the working directory (upstream's examples are
// relative to where MassGen runs).
func toolDirs(cfg *config.Config, workDir string) []string {
	var dirs []string
	if cfg.Path != "" && !strings.HasPrefix(cfg.Path, "@") {
		dirs = append(dirs, filepath.Dir(cfg.Path))
	}
	if !slices.Contains(dirs, workDir) {
		dirs = append(dirs, workDir)
	}
	return dirs
}

func configAgent(cfg *config.Config, id string) config.Agent {
	for _, a := range cfg.Agents {
		if a.ID == id {
			return a
		}
	}
	return config.Agent{}
}

// findFile resolves p against dirs, naming every place looked when it is
// in none.
func findFile(p string, dirs []string) (string, error) {
	if filepath.IsAbs(p) {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("file %s not found", p)
		}
		return p, nil
	}
	var looked []string
	for _, d := range dirs {
		c := filepath.Join(d, p)
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, nil
		}
		looked = append(looked, c)
	}
	return "", fmt.Errorf("file %q not found (looked at %s)", p, strings.Join(looked, " and "))
}

// findToolFile is the Python file of a tool. Without a path, upstream
// loads one of its own built-in tools; here the function is looked for in
// massgen/tool/**/*.py under the tool directories (a MassGen checkout).
func findToolFile(tc config.CustomTool, dirs []string) (string, error) {
	if tc.Path != "" {
		f, err := findFile(tc.Path, dirs)
		if err != nil {
			return "", fmt.Errorf("custom tool %s: %w", tc.Name, err)
		}
		return f, nil
	}
	def := regexp.MustCompile(`(?m)^(async\s+)?def\s+` + regexp.QuoteMeta(tc.Function) + `\s*\(`)
	var roots []string
	for _, d := range dirs {
		root := filepath.Join(d, "massgen", "tool")
		roots = append(roots, root)
		var found string
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || found != "" || e.IsDir() || filepath.Ext(p) != ".py" {
				return nil
			}
			if data, err := os.ReadFile(p); err == nil && def.Match(data) {
				found = p
				return fs.SkipAll
			}
			return nil
		})
		if found != "" {
			return found, nil
		}
	}
	return "", fmt.Errorf("custom tool %s has no path, and no file under %s defines %s (upstream's built-in tools are not part of massgen): "+
		"set path: to the Python file that defines it", tc.Name, strings.Join(roots, " or "), tc.Function)
}

// resolveExecutable finds a command tool's program: a path (relative ones
// against dirs) or a name on the PATH.
func resolveExecutable(p string, dirs []string) (string, error) {
	if !strings.ContainsRune(p, filepath.Separator) && !strings.ContainsRune(p, '/') {
		exe, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("command %q is not on the PATH", p)
		}
		return exe, nil
	}
	return findFile(p, dirs)
}
