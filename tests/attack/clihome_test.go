package attack

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A run with a CLI agent removes the private homes that killed massgen
// processes left in the temporary directory (names with a dead pid). An
// attacker plants such names — a symlink to the user's files, and a stale
// home holding one — hoping the sweep deletes through them: the user's
// files must be untouched.
func TestStaleCLIHomeSweepDeletesNothingThroughLinks(t *testing.T) {
	attempt(t, "cli home sweep: planted links to the user's files", func(t *testing.T) {
		dir := tempDir(t)
		victim := filepath.Join(dir, "precious")
		must(t, os.MkdirAll(filepath.Join(victim, "sub"), 0o755))
		files := map[string]string{"keep.txt": "keep " + canary, "sub/also.txt": "also"}
		for name, body := range files {
			must(t, os.WriteFile(filepath.Join(victim, name), []byte(body), 0o644))
		}
		dead := exec.Command("true")
		must(t, dead.Run())
		pid := dead.Process.Pid
		link := filepath.Join(os.TempDir(), fmt.Sprintf("massgen-cli-%d-evil-link", pid))
		home := filepath.Join(os.TempDir(), fmt.Sprintf("massgen-cli-%d-evil-home", pid))
		must(t, os.Symlink(victim, link))
		must(t, os.MkdirAll(home, 0o700))
		must(t, os.Symlink(victim, filepath.Join(home, "inner")))
		t.Cleanup(func() { os.Remove(link); os.RemoveAll(home) })

		cliProbe(t, dir, func(string) string { return "true" }, nil) // a run with a claude_code agent sweeps

		for name, body := range files {
			got, err := os.ReadFile(filepath.Join(victim, name))
			if err != nil || string(got) != body {
				t.Errorf("the user's %s after the sweep: %q, %v", name, got, err)
			}
		}
		if _, err := os.Lstat(home); !os.IsNotExist(err) {
			t.Errorf("the stale home is still there: %v", err)
		}
	})
}
