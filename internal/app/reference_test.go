package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/config"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/provider"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// referenceConfigs is where the original MassGen's example configs lie,
// beside the project (never copied into it).
const referenceConfigs = "../../../shared/reference/massgen-configs"

// TestEveryReferenceConfigRunsAgainstTheSimulator runs each upstream config
// unchanged, with every provider pointed at one local simulator through the
// MASSGEN_<TYPE>_BASE_URL overrides (the user-facing feature for local
// gateways). Each must reach a final answer.
func TestEveryReferenceConfigRunsAgainstTheSimulator(t *testing.T) {
	if _, err := os.Stat(referenceConfigs); err != nil {
		t.Skipf("reference configs not found at %s (they live beside the project in ../shared): %v", referenceConfigs, err)
	}
	// Upstream's MCP examples start servers with npx from the npm
	// registry: a test must not download and run them. With an empty PATH
	// their servers fail to start, and are left out with a warning (as
	// upstream does); the MCP client is tested against pinned servers
	// (internal/tool/mcp, TestMCP* here).
	// The coding-agent CLIs (claude_code) are the pinned npm programs.
	t.Setenv("PATH", cliPath(t, "claude_code", "codex", "gemini_cli", "copilot"))
	srv := llmsim.New(nil)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	root := strings.TrimSuffix(url, "/v1")
	vars := map[string]string{}
	for _, typ := range provider.Names() {
		spec, _ := provider.Lookup(typ)
		base := url
		if spec.Wire == provider.WireGemini {
			base = root // the Gemini SDK adds its own /v1beta
		}
		vars["MASSGEN_"+strings.ToUpper(typ)+"_BASE_URL"] = base
	}
	var files []string
	_ = filepath.WalkDir(referenceConfigs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no reference configs found")
	}
	for _, f := range files {
		name := strings.TrimPrefix(f, referenceConfigs+"/")
		t.Run(name, func(t *testing.T) {
			abs, _ := filepath.Abs(f)
			env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: discard{}, WorkDir: t.TempDir()}
			makeContextPaths(t, abs, env.WorkDir)
			out, err := Execute(t.Context(), env, Request{Question: "What is 2+2?", Team: Team{Config: abs}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}})
			if err != nil {
				t.Fatalf("did not start: %v", err)
			}
			if out.Status != "completed" || out.Final == "" {
				t.Fatalf("status %s, final %q, err %v", out.Status, out.Final, out.Err)
			}
		})
	}
}

// makeContextPaths creates, in workDir, the relative context paths a
// config shares (upstream's point into the MassGen checkout): a run fails
// at start when one is missing, and these configs are run as a user would
// run them, in a project that has those paths.
func makeContextPaths(t *testing.T, configFile, workDir string) {
	t.Helper()
	cfg, err := config.Load(configFile, func(string) string { return "" })
	if err != nil {
		return // the run reports it
	}
	cps := slices.Clone(cfg.Orchestrator.ContextPaths)
	for _, a := range cfg.Agents {
		cps = append(cps, a.Backend.ContextPaths...)
	}
	for _, cp := range cps {
		if cp.Path == "" || filepath.IsAbs(cp.Path) {
			continue
		}
		p := filepath.Join(workDir, cp.Path)
		if filepath.Ext(p) == "" {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("fixture"), 0o644))
	}
}

// TestFilesystemConfigsRunWithoutIgnoredKeys: upstream's examples of
// workspaces and commands (tools/filesystem, tools/code-execution) that do
// not need claude_code or Docker run against the simulator with every
// workspace key honoured: no "accepted but ignored" warning.
func TestFilesystemConfigsRunWithoutIgnoredKeys(t *testing.T) {
	if _, err := os.Stat(referenceConfigs); err != nil {
		t.Skipf("reference configs not found at %s (they live beside the project in ../shared): %v", referenceConfigs, err)
	}
	srv := llmsim.New(nil)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	vars := simBaseURLs(url)
	// Docker mode's configs run too where an engine answers (CI starts one).
	needs := regexp.MustCompile(`(?m)^\s*(type:\s*"?claude_code"?|command_line_execution_mode:\s*"?docker"?)`)
	if dockertest.Answers() {
		needs = regexp.MustCompile(`(?m)^\s*type:\s*"?claude_code"?`)
	}
	ran := 0
	for _, dir := range []string{"tools/filesystem", "tools/code-execution"} {
		var files []string
		_ = filepath.WalkDir(filepath.Join(referenceConfigs, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
				files = append(files, p)
			}
			return nil
		})
		for _, f := range files {
			data, _ := os.ReadFile(f)
			if needs.Match(data) {
				continue
			}
			ran++
			t.Run(strings.TrimPrefix(f, referenceConfigs+"/"), func(t *testing.T) {
				abs, _ := filepath.Abs(f)
				var stderr strings.Builder
				env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: t.TempDir()}
				makeContextPaths(t, abs, env.WorkDir)
				out, err := Execute(t.Context(), env, Request{Question: "What is 2+2?", Team: Team{Config: abs}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}})
				if err != nil {
					t.Fatalf("did not start: %v", err)
				}
				if out.Status != "completed" || out.Final == "" {
					t.Fatalf("status %s, final %q, err %v", out.Status, out.Final, out.Err)
				}
				for _, l := range strings.Split(stderr.String(), "\n") {
					if strings.Contains(l, "accepted but ignored") {
						t.Errorf("%s", l)
					}
				}
			})
		}
	}
	if ran == 0 {
		t.Fatal("no config of tools/filesystem or tools/code-execution ran")
	}
}
