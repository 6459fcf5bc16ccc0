package app

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corpusFiles lists a corpus's configs.
func corpusFiles(dir string) []string {
	var files []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// TestCorporaRunWithToolsOfferedAndCalled runs every config of both
// shipped corpora — MassGen v0.1.12's and v0.1.73's, all of them — on the
// simulator as runOnSimulator does: every tool an agent is offered (file
// and command tools, custom tools, the MCP servers that start offline) is
// called once, and its result goes back to the model. It logs, per
// corpus, how many complete with and without the configs of CLI agents
// (claude_code, codex, gemini_cli, copilot), and how many offered tools;
// every completed run must have called every tool it offered.
func TestCorporaRunWithToolsOfferedAndCalled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every config of both corpora, twice")
	}
	// The coding-agent CLIs are left off PATH: their configs do not start
	// and are counted apart. TestV073ConfigsRunAgainstTheSimulator runs
	// them once each with the pinned CLIs; twice each here would take
	// minutes.
	path := "/usr/local/bin:/usr/bin:/bin"
	shim := npxShim(t)
	if shim == "" {
		shim = t.TempDir() // no MCP test servers: every npx server fails to start
		for _, fetcher := range []string{"npx", "uvx", "uv"} {
			must(t, os.WriteFile(filepath.Join(shim, fetcher), []byte("#!/bin/sh\nexit 1\n"), 0o755))
		}
	}
	t.Setenv("PATH", shim+":"+path)
	for _, corpus := range []struct {
		name, dir string
		min       int // configs without a CLI agent that must complete (a floor; raise it as features land)
	}{
		{"v0.1.12", referenceConfigs, 107}, // all of them (the other 11 are claude_code's)
		{"v0.1.73", referenceConfigs073, 209},
	} {
		t.Run(corpus.name, func(t *testing.T) {
			files := corpusFiles(corpus.dir)
			if len(files) == 0 {
				t.Skipf("reference configs not found at %s (they live beside the project in ../shared)", corpus.dir)
			}
			completed, cliTotal, cliCompleted, withTools, allCalled := 0, 0, 0, 0, 0
			var partly []string // agents share a model, not their tools
			reasons := map[string][]string{}
			for _, f := range files {
				name := strings.TrimPrefix(f, corpus.dir+"/")
				data, _ := os.ReadFile(f)
				isCLI := cliBackend.Match(data)
				if isCLI {
					cliTotal++
				}
				t.Run(name, func(t *testing.T) {
					abs, _ := filepath.Abs(f)
					res := runOnSimulator(t, abs, nil, func(work string) { makeContextPaths(t, abs, work) })
					switch {
					case res.err != nil:
						r := "did not start: " + oneLine(res.err.Error())
						reasons[r] = append(reasons[r], name)
						return
					case res.out.Status != "completed" || res.out.Final == "":
						r := fmt.Sprintf("status %s: %v", res.out.Status, res.out.Err)
						reasons[r] = append(reasons[r], name)
						return
					}
					completed++
					if isCLI {
						cliCompleted++
					}
					if len(res.partly) > 0 {
						partly = append(partly, name)
					}
					if len(res.offered) == 0 {
						return
					}
					withTools++
					if u := res.uncalled(); len(u) > 0 {
						t.Errorf("offered but never called: %q", u)
						return
					}
					allCalled++
				})
			}
			var b strings.Builder
			for _, r := range slices.Sorted(maps.Keys(reasons)) {
				fmt.Fprintf(&b, "\n  %3d  %s: %s", len(reasons[r]), r, strings.Join(reasons[r], ", "))
			}
			others := len(files) - cliTotal
			t.Logf("%s on the simulator, tools called: %d of %d complete (%.1f %%); without the %d CLI-agent configs %d of %d (%.1f %%); "+
				"%d completed runs offered tools, every one called in %d (not called: the tools of agents that share a model but not their tools, in %s); not completed:%s",
				corpus.name, completed, len(files), pct(completed, len(files)), cliTotal, completed-cliCompleted, others,
				pct(completed-cliCompleted, others), withTools, allCalled, strings.Join(partly, ", "), b.String())
			if completed-cliCompleted < corpus.min {
				t.Errorf("%d configs without a CLI agent complete, fewer than the %d that did", completed-cliCompleted, corpus.min)
			}
		})
	}
}
