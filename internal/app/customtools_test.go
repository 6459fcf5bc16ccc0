package app

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/provider"
	"github.com/massgen/massgen/internal/tool/custom"
)

// needPython skips a test that runs Python tools when there is no Python,
// except in CI, which must have it.
func needPython(t *testing.T) {
	t.Helper()
	if _, err := custom.FindPython(os.Getenv); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must have Python for the custom tool tests: %v", err)
		}
		t.Skipf("no Python: %v", err)
	}
}

// A test's own config: a Python tool beside it (with preset_args) and a
// command tool, both called by a simulated agent whose answer uses them.
func TestCustomToolsAreCalledInARun(t *testing.T) {
	needPython(t)
	cfgPath, _ := filepath.Abs("testdata/customtools/team.yaml")
	env := &Env{Getenv: os.Getenv, Stderr: discard{}, WorkDir: t.TempDir()} // paths resolve against the config's directory
	out, err := Execute(t.Context(), env, Request{Question: "Capital of France, and shout hello.", Team: Team{Config: cfgPath}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final != "Paris, and HELLO." {
		t.Fatalf("status %s, final %q, err %v", out.Status, out.Final, out.Err)
	}
}

func TestMissingToolFilesAreWarningsAndErrorResults(t *testing.T) {
	cfg := config.New(config.Agent{ID: "a", Backend: config.Backend{Type: "sim", Model: "sim", Stream: true, CustomTools: []config.CustomTool{
		{Type: "python", Name: "gone", Path: "massgen/tool/_basic/_two_num_tool.py", Function: "two_num_tool"},
		{Type: "python", Name: "builtin_one", Function: "no_such_builtin"},
		{Type: "command", Name: "nocmd", Command: []string{"./not-here.sh"}},
	}}})
	work := t.TempDir()
	tm, err := buildTeam(cfg, func(string) string { return "" }, work)
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	warnings := strings.Join(tm.warnings, "\n")
	for _, want := range []string{
		`custom tool gone: file "massgen/tool/_basic/_two_num_tool.py" not found (looked at ` + filepath.Join(work, "massgen/tool/_basic/_two_num_tool.py") + ")",
		"custom tool builtin_one has no path, and no file under " + filepath.Join(work, "massgen", "tool") + " defines no_such_builtin",
		`custom tool custom_tool__nocmd: file "./not-here.sh" not found`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	tools := tm.agents[0].Tools
	if got := tools.Names(); strings.Join(got, ",") != "custom_tool__gone,custom_tool__builtin_one,custom_tool__nocmd" {
		t.Fatalf("tools = %q", got)
	}
	tl, _ := tools.Lookup("custom_tool__gone")
	if r := tl.Call(t.Context(), []byte(`{}`)); !r.IsError || !strings.Contains(r.Content, "not found (looked at") {
		t.Errorf("calling a tool whose file is missing: %+v", r)
	}
	if tm.python != nil {
		t.Error("a runner was started for no loadable tool")
	}
}

// upstreamTools is the upstream tool tree beside the project: the upstream
// configs' relative paths (massgen/tool/...) resolve against it as the
// working directory, as they do in a MassGen checkout.
const upstreamTools = "../../../shared/reference/massgen-tools"

// The upstream custom-tool examples run against the simulator with their
// tool called for real: each config unchanged (but for the npx of its MCP
// server, see below), its model scripted to call custom_tool__two_num_tool
// and to answer only once the result says 579 — or, for the "wrong"
// configs, whose function the file does not define, an error naming it.
func TestUpstreamCustomToolConfigsCallTheirTool(t *testing.T) {
	dir := filepath.Join(referenceConfigs, "tools", "custom_tools")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		t.Skipf("reference configs not found at %s", dir)
	}
	needPython(t)
	work, _ := filepath.Abs(upstreamTools)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, _ := os.ReadFile(f)
			for _, skip := range []struct{ pattern, why string }{
				{`computer_use`, "needs computer use"},
			} {
				if regexp.MustCompile(skip.pattern).Match(data) {
					t.Skip(skip.why)
				}
			}
			for _, m := range regexp.MustCompile(`(?m)^\s*path:\s*"?([^"\n]+\.py)`).FindAllSubmatch(data, -1) {
				if _, err := os.Stat(filepath.Join(work, string(m[1]))); err != nil {
					t.Skipf("its tool file %s is not among the upstream tool files beside the project", m[1])
				}
			}
			abs, _ := filepath.Abs(f)
			cliAgent := regexp.MustCompile(`(?m)^\s*type:\s*"?claude_code`).Match(data)
			if cliAgent {
				// Claude Code from tests/cli-agents, given the custom tool
				// over MCP (mcp__massgen_tools__custom_tool__two_num_tool,
				// which the simulator calls by its bare name). Its own
				// directory on PATH, not a link to it in a temporary one:
				// the sandbox shows the CLI's installation, not /tmp.
				t.Setenv("PATH", filepath.Dir(clitest.Program(t, "claude_code"))+":"+os.Getenv("PATH"))
			}
			// The configs with MCP servers run theirs with npx from the
			// registry (a third-party weather server): here their command
			// is one that does not exist, so the server is left out with a
			// warning and the custom tool must still be called.
			withMCP := regexp.MustCompile(`(?m)^\s*mcp_servers:`).Match(data)
			if withMCP {
				data = regexp.MustCompile(`(?m)^(\s*command:\s*)"?npx"?\s*$`).ReplaceAll(data, []byte(`${1}"/nonexistent/massgen-test/npx"`))
				abs = filepath.Join(t.TempDir(), filepath.Base(f))
				if err := os.WriteFile(abs, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := config.Load(abs, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			sc := &llmsim.Scenario{Models: map[string]llmsim.ModelScript{}}
			const final = "123 + 456 = 579, says the tool."
			want := "The sum of 123 and 456 is 579"
			if strings.Contains(f, "wrong_custom_tool") {
				// Upstream's configs with a function the file does not
				// define: the call is an error result that names it.
				want = "defines wrong_two_num_tool"
			}
			for _, a := range cfg.Agents {
				sc.Models[a.Backend.Model] = llmsim.ModelScript{Steps: []llmsim.Step{
					{Calls: []llmsim.Call{{Name: "custom_tool__two_num_tool", Arguments: `{"x": 123, "y": 456}`}}},
					{ExpectResults: []llmsim.Expect{{Name: "custom_tool__two_num_tool", Contains: want}}, Answer: final},
				}}
			}
			srv := llmsim.New(sc)
			url, err := srv.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			vars := simBaseURLs(url)
			var stderr bytes.Buffer
			env := &Env{Getenv: func(k string) string {
				if v, ok := vars[k]; ok {
					return v
				}
				return os.Getenv(k) // PATH, for Python
			}, Stderr: &lockedBuffer{b: &stderr}, WorkDir: work}
			out, err := Execute(t.Context(), env, Request{Question: "whats the sum of 123 and 456?", Team: Team{Config: abs}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range srv.Requests() {
				if r.Problem != "" {
					t.Errorf("the simulator refused a request: %s", r.Problem)
				}
			}
			if out.Status != "completed" || out.Final != final {
				t.Fatalf("status %s, final %q, err %v\nstderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
			}
			// A CLI agent starts its MCP servers itself, and goes on without
			// one that does not start, as Claude Code does.
			if withMCP && !cliAgent && !strings.Contains(stderr.String(), "its tools are left out: MCP server") {
				t.Errorf("the broken MCP server was not warned about:\n%s", stderr.String())
			}
		})
	}
}

// simBaseURLs points every provider at one simulator, as the reference
// test does.
func simBaseURLs(url string) map[string]string {
	root := strings.TrimSuffix(url, "/v1")
	vars := map[string]string{}
	for _, typ := range provider.Names() {
		spec, _ := provider.Lookup(typ)
		base := url
		if spec.Wire == provider.WireGemini {
			base = root
		}
		vars["MASSGEN_"+strings.ToUpper(typ)+"_BASE_URL"] = base
	}
	return vars
}
