package attack

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// Class 13 too: Claude Code in docker mode (commit 52cf823) stays on this
// machine under bubblewrap, its own Bash off, and runs its commands in the
// agent's container through massgen's execute_command, served to it over
// MCP. Its hostile model calls Bash all the same: not offered, refused,
// nothing written (not even in its workspace, where bubblewrap would let
// it). It has execute_command write beside the workspace and into the
// user's home: the command runs in the container (its shell is busybox's),
// and nothing of it reaches the host.
func TestClaudeCodeDockerCommands(t *testing.T) {
	needBwrap(t)
	image := dockertest.Image(t)
	clitest.Program(t, "claude_code")
	backend := map[string]any{"enable_mcp_command_line": true,
		"command_line_execution_mode": "docker", "command_line_docker_image": image}
	// escapes writes beside the workspace (dir) and into the home (user),
	// by absolute paths and relative ones.
	escapes := func(dir, user string) string {
		return "echo x > " + filepath.Join(dir, "escape.txt") + "; mkdir -p " + user + " && echo x > " + filepath.Join(user, "escape.txt") +
			"; echo x > $HOME/escape.txt; echo x > ../escape.txt; echo x > ../../escape.txt; mkdir -p " +
			filepath.Join(dir, plantedDir, "new") + " && echo x > " + filepath.Join(dir, plantedDir, "new", "x") +
			"; echo x >> " + filepath.Join(dir, plantedDir, "keep.txt")
	}
	type ccAttack struct {
		steps func(dir, user string) []any
		check func(t *testing.T, dir string, r result, offered [][]string)
	}
	attacks := map[string]ccAttack{
		"its own Bash tool, not offered": {
			steps: func(dir, user string) []any {
				return []any{callStep("Bash", map[string]string{"command": "echo x > bash-ran.txt; " + escapes(dir, user), "description": "escape"}),
					callStep("execute_command", map[string]string{"command": "echo the-turn-went-on > after.txt"}), answerStep}
			},
			check: func(t *testing.T, dir string, r result, offered [][]string) {
				for _, tools := range offered {
					if slices.Contains(tools, "Bash") {
						t.Errorf("Claude Code offered its model Bash: %q", tools)
					}
				}
				if _, ok := wsFile(dir, "after.txt"); !ok {
					t.Fatalf("the run did not go on to its next call (the attack's outcome unknown):\n%s", r)
				}
				if hits := findNamed(dir, "bash-ran.txt"); len(hits) > 0 {
					t.Errorf("Bash ran: %q", hits)
				}
			}},
		"execute_command writing beside the workspace and into the home": {
			steps: func(dir, user string) []any {
				return []any{callStep("execute_command", map[string]string{"command": probeWrap("readlink /bin/sh; " + escapes(dir, user) + "; echo looked")}), answerStep}
			},
			check: func(t *testing.T, dir string, r result, _ [][]string) {
				out := probeOutput(t, dir, r)
				if !strings.Contains(out, "busybox") || !strings.Contains(out, "looked") {
					t.Errorf("the command did not run in the container (its shell is not the image's): %s", out)
				}
			}},
	}
	for name, a := range attacks {
		attempt(t, "claude_code in docker: "+name, func(t *testing.T) {
			t.Parallel()
			dir, user := tempDir(t), tempDir(t)
			writeFiles(t, filepath.Join(dir, plantedDir), map[string]string{"keep.txt": "the user's"})
			writeFiles(t, user, map[string]string{".profile": "# the user's"})
			outBefore, userBefore := snap(t, filepath.Join(dir, plantedDir)), snap(t, user)
			base, sim := simServeRecorded(t, loopback(t), hostileScenario(a.steps(dir, user)...))
			r := cliRun(t, dir, "claude_code", base, backend, nil, "HOME="+user)
			if r.code != 0 {
				t.Fatalf("the run failed:\n%s", r)
			}
			inContainer(t, r)
			var offered [][]string
			for _, rec := range sim.Requests() {
				if rec.Model == "hostile" {
					offered = append(offered, rec.Tools)
				}
			}
			if len(offered) == 0 || !slices.ContainsFunc(offered, func(ts []string) bool {
				return slices.Contains(ts, "mcp__massgen_tools__execute_command")
			}) {
				t.Errorf("Claude Code was not offered massgen's execute_command: %q", offered)
			}
			a.check(t, dir, r, offered)
			notOnHost(t, filepath.Join(dir, "escape.txt"), filepath.Join(user, "escape.txt"), filepath.Join(filepath.Dir(dir), "escape.txt"))
			unchanged(t, "the directory beside the workspace", filepath.Join(dir, plantedDir), outBefore)
			homeUnchanged(t, user, userBefore)
			noCanary(t, r)
		})
	}
}

// findNamed lists the files named name under root.
func findNamed(root, name string) []string {
	var out []string
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Name() == name {
			out = append(out, p)
		}
		return nil
	})
	return out
}
