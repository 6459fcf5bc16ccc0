package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/kit/tasks"
	"github.com/massgen/massgen/internal/llmsim"
)

var (
	taskPlanningOn   = regexp.MustCompile(`(?m)^\s*enable_agent_task_planning:\s*true\b`)
	taskPlanningFile = regexp.MustCompile(`(?m)^\s*task_planning_filesystem_mode:\s*true\b`)
)

// Every config of both corpora that turns task planning on runs on the
// simulator unchanged (but those of CLI agents, whose prompt and tools
// reach their CLI): none of its task planning keys is ignored, and each
// API agent's coordination requests offer the nine planning tools, with
// the task planning section (naming tasks/plan.json in filesystem mode) in
// the system message.
func TestUpstreamTaskPlanningConfigsOfferThePlanningTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the corpora's task planning configs")
	}
	shim := t.TempDir() // MCP servers from the registries fail to start, offline
	for _, fetcher := range []string{"npx", "uvx", "uv"} {
		must(t, os.WriteFile(filepath.Join(shim, fetcher), []byte("#!/bin/sh\nexit 1\n"), 0o755))
	}
	t.Setenv("PATH", shim+":/usr/local/bin:/usr/bin:/bin")
	srv := llmsim.New(nil)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	vars := simBaseURLs(url)
	ran := 0
	for _, dir := range []string{referenceConfigs, referenceConfigs073} {
		if _, err := os.Stat(dir); err != nil {
			t.Skipf("reference configs not found at %s (they live beside the project in ../shared): %v", dir, err)
		}
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
				return err
			}
			data, _ := os.ReadFile(p)
			if !taskPlanningOn.Match(data) || cliBackend.Match(data) {
				return nil
			}
			ran++
			name := strings.TrimPrefix(p, filepath.Dir(dir)+"/")
			t.Run(name, func(t *testing.T) {
				abs, _ := filepath.Abs(p)
				env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: discard{}, WorkDir: t.TempDir()}
				makeContextPaths(t, abs, env.WorkDir)
				before := len(srv.Requests())
				out, err := Execute(t.Context(), env, Request{Question: "What is 2+2?", Team: Team{Config: abs}, Overrides: Overrides{Timeout: 60}, Logging: Logging{NoLogs: true}})
				if err != nil && strings.Contains(err.Error(), "which is not set") {
					t.Skipf("needs keys the config names: %v", err) // azure_openai_multi: its own variable names
				}
				if err != nil {
					t.Fatalf("did not start: %v", err)
				}
				for _, ig := range out.IgnoredFeatures {
					if strings.Contains(ig, "task_planning") || strings.Contains(ig, "max_tasks_per_plan") {
						t.Errorf("ignored: %s", ig)
					}
				}
				checked := 0
				for _, r := range srv.Requests()[before:] {
					if !slices.Contains(r.Tools, "new_answer") {
						continue // a presentation, or a request of another kind
					}
					checked++
					for _, n := range tasks.Names {
						if !slices.Contains(r.Tools, n) {
							t.Errorf("%s: request %d offers no %s: %q", r.Model, r.ID, n, r.Tools)
						}
					}
					if len(r.Messages) == 0 || !strings.Contains(r.Messages[0].Content, "<task_planning>") {
						t.Errorf("%s: request %d has no task planning section", r.Model, r.ID)
					} else if fsMode := strings.Contains(r.Messages[0].Content, "tasks/plan.json"); fsMode != taskPlanningFile.Match(data) {
						t.Errorf("%s: the section names tasks/plan.json: %v; the config's filesystem mode: %v", r.Model, fsMode, !fsMode)
					}
				}
				if checked == 0 {
					t.Errorf("no coordination request (status %s: %v)", out.Status, out.Err)
				}
			})
			return nil
		})
	}
	t.Logf("%d task planning configs ran", ran)
	if ran < 22 {
		t.Errorf("only %d task planning configs without a CLI agent, want the 22 of both corpora", ran)
	}
}
