package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// envFiles writes the three files env_file loads: the user's
// ~/.massgen/.env, the config's keys.env and the working directory's .env.
// Each later one overrides one variable of the one before.
func envFiles(t *testing.T) (home, cfgDir, work string) {
	root := t.TempDir()
	home, cfgDir, work = filepath.Join(root, "home"), filepath.Join(root, "team"), filepath.Join(root, "work")
	for _, d := range []string{filepath.Join(home, ".massgen"), cfgDir, work} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(home, ".massgen", ".env"),
		[]byte("OPENAI_API_KEY=sk-home-openai-0000\nGEMINI_API_KEY=home-gemini-3333\nHIDDEN_KEY=hidden-home-5555\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(cfgDir, "keys.env"),
		[]byte("OPENAI_API_KEY=sk-file-openai-1111\nANTHROPIC_API_KEY='sk-file-anthropic-9999'\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(work, ".env"),
		[]byte("export ANTHROPIC_API_KEY=\"sk-cwd-anthropic-2222\"\nNOT_SELECTED=not-selected-6666\n"), 0o600))
	return home, cfgDir, work
}

// env_file loads ~/.massgen/.env, the file, then ./.env, the later
// winning; env_vars_from_file keeps its names, and a name no file defines
// is a warning naming it and the files, never a value.
func TestDockerFileEnvOrder(t *testing.T) {
	home, cfgDir, work := envFiles(t)
	d := config.Docker{EnvFile: filepath.Join(cfgDir, "keys.env"),
		EnvFromFile: []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISSING_KEY"}}
	env, warnings := dockerFileEnv("a", d, work, home)
	want := []string{"OPENAI_API_KEY=sk-file-openai-1111", "ANTHROPIC_API_KEY=sk-cwd-anthropic-2222", "GEMINI_API_KEY=home-gemini-3333"}
	if !slices.Equal(env, want) {
		t.Errorf("env %q, want %q", env, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "MISSING_KEY") || !strings.Contains(warnings[0], filepath.Join(home, ".massgen", ".env")) {
		t.Errorf("warnings %q", warnings)
	}
	// Without env_vars_from_file every variable of the files goes in.
	d.EnvFromFile = nil
	env, warnings = dockerFileEnv("a", d, work, home)
	want = []string{"ANTHROPIC_API_KEY=sk-cwd-anthropic-2222", "GEMINI_API_KEY=home-gemini-3333", "HIDDEN_KEY=hidden-home-5555",
		"NOT_SELECTED=not-selected-6666", "OPENAI_API_KEY=sk-file-openai-1111"}
	if !slices.Equal(env, want) || len(warnings) != 0 {
		t.Errorf("env %q, want %q; warnings %q", env, want, warnings)
	}
	// A relative file is the working directory's; one that does not exist
	// is said, and the others are still read. No file at all is no error.
	d = config.Docker{EnvFile: "nope.env", EnvFromFile: []string{"GEMINI_API_KEY"}}
	env, warnings = dockerFileEnv("a", d, work, home)
	if !slices.Equal(env, []string{"GEMINI_API_KEY=home-gemini-3333"}) || len(warnings) != 1 || !strings.Contains(warnings[0], filepath.Join(work, "nope.env")+" does not exist") {
		t.Errorf("env %q, warnings %q", env, warnings)
	}
	env, warnings = dockerFileEnv("a", config.Docker{EnvFile: filepath.Join(cfgDir, "keys.env")}, t.TempDir(), "")
	if len(env) != 2 || len(warnings) != 0 {
		t.Errorf("only the given file: env %q, warnings %q", env, warnings)
	}
	for _, w := range warnings {
		if strings.Contains(w, "sk-") {
			t.Errorf("a value in a warning: %s", w)
		}
	}
}

// TestDockerEnvFileInARun: a config's env_file and env_vars_from_file, as
// upstream's configs write them, give the agent's container exactly the
// picked variables, each from the last file that sets it (their hashes,
// printed in there, are the values'); the others do not get in; a name no
// file has is a warning; and the values a command printed are masked in
// its result, so they appear in none of the run's files, its output or
// stderr.
func TestDockerEnvFileInARun(t *testing.T) {
	image := dockertest.Image(t)
	dockertest.Engine(t)
	home, cfgDir, work := envFiles(t)
	t.Setenv("HOME", home)
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: keys
      cwd: workspace1
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: %s
      command_line_docker_credentials:
        env_file: keys.env
        env_vars_from_file: [OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, MISSING_KEY]
      scenario:
        defaults: {ttft_ms: 0}
        models:
          keys:
            steps:
              - calls:
                  - {name: execute_command, arguments: '{"command": "echo $OPENAI_API_KEY $ANTHROPIC_API_KEY $GEMINI_API_KEY"}'}
                  - {name: execute_command, arguments: '{"command": "for v in \"$OPENAI_API_KEY\" \"$ANTHROPIC_API_KEY\" \"$GEMINI_API_KEY\"; do printf %%s \"$v\" | busybox sha256sum; done"}'}
                  - {name: execute_command, arguments: '{"command": "env | grep -e HIDDEN -e NOT_SELECTED -e MISSING || echo none-of-the-others"}'}
              - expect_results:
                  - {name: execute_command, contains: "exit code: 0\nsk-…[redacted] sk-…[redacted] home-…[redacted]\n"}
                  - {name: execute_command, contains: "exit code: 0\n%s  -\n%s  -\n%s  -\n"}
                  - {name: execute_command, contains: "exit code: 0\nnone-of-the-others"}
                answer: "The keys are there."
              - when: coordination
                vote: agent1
`, image, sum("sk-file-openai-1111"), sum("sk-cwd-anthropic-2222"), sum("home-gemini-3333"))
	cfgPath := filepath.Join(cfgDir, "team.yaml")
	must(t, os.WriteFile(cfgPath, []byte(yaml), 0o644))
	var stderr strings.Builder
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: work}
	out, err := Execute(t.Context(), env, Request{
		Question:  "Are the keys there?",
		Team:      Team{Config: cfgPath},
		Overrides: Overrides{Timeout: 120},
		Logging:   Logging{LogDir: filepath.Join(work, "logs")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" || out.Final != "The keys are there." {
		logRun(t, out.LogDir)
		t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "env_vars_from_file: MISSING_KEY is in none of") || strings.Contains(stderr.String(), "accepted but ignored") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	secrets := []string{"sk-file-openai-1111", "sk-cwd-anthropic-2222", "home-gemini-3333"}
	texts := map[string]string{"stderr": stderr.String(), "final": out.Final}
	filepath.WalkDir(out.LogDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			texts[p] = string(b)
		}
		return nil
	})
	if len(texts) < 4 {
		t.Fatalf("the run wrote %d log files", len(texts)-2)
	}
	for name, s := range texts {
		for _, v := range secrets {
			if strings.Contains(s, v) {
				t.Errorf("%s holds the value %s", name, v)
			}
		}
	}
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
