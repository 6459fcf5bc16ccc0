package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// `massgen setup cli gemini_cli` installs the pinned Gemini CLI with npm
// into ~/.local/share/massgen/cli, and a team with a gemini_cli agent then finds it
// there, with no gemini on PATH, and runs on the simulator. npm reads the
// packages from its cache when tests/cli-agents' npm ci has filled it.
func TestSetupCLIInstallsWhatATeamThenRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("npm is not on PATH")
		}
		t.Skip("npm is not on PATH")
	}
	if home, err := os.UserHomeDir(); err == nil {
		t.Setenv("npm_config_cache", filepath.Join(home, ".npm")) // the user's cache, not the test home's empty one
	}
	// PATH: node and npm, the system's tools, no gemini.
	t.Setenv("PATH", filepath.Dir(npm)+":/usr/local/bin:/usr/bin:/bin")
	if _, err := exec.LookPath("gemini"); err == nil {
		t.Skip("gemini is on the system's PATH: the test could not tell where a team found it")
	}
	dir := t.TempDir()
	r := runIn(t, dir, "", nil, "setup", "cli", "gemini_cli")
	if r.code != 0 {
		t.Fatalf("setup cli: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".local", "share", "massgen", "cli", "node_modules", ".bin", "gemini")); err != nil {
		t.Fatalf("gemini was not installed: %v\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stdout, filepath.Join(dir, ".local", "share", "massgen", "cli")) {
		t.Errorf("setup does not say where: %s", r.stdout)
	}
	_, url := simtest.Start(t, "")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "team.yaml"), []byte("agents:\n  - id: g\n    backend: {type: gemini_cli, model: gem-sim}\n"), 0o644))
	r = runIn(t, dir, "", map[string]string{"GEMINI_API_KEY": "k", "MASSGEN_GEMINI_CLI_BASE_URL": url},
		"--config", "team.yaml", "--display", "plain", "What is 2+2?")
	if r.code != 0 || !strings.Contains(r.stdout, "sim model gem-sim") {
		t.Fatalf("the team did not run with the installed CLI: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = runIn(t, dir, "", nil, "setup", "cli", "cursor")
	if r.code != 1 || !strings.Contains(r.stderr, "claude_code, codex, copilot, gemini_cli") {
		t.Errorf("an unknown CLI: exit %d, %s", r.code, r.stderr)
	}
}
