package attack

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writerSizes are the sizes of every copy of the writer's file in the
// run's directory: the workspace, its snapshots, the final copy, the
// logs' copies.
func writerSizes(dir, name string) map[string]int64 {
	out := map[string]int64{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && d.Name() == name {
			if fi, err := d.Info(); err == nil {
				out[p] = fi.Size()
			}
		}
		return nil
	})
	return out
}

// After a command is stopped (its turn or the run times out, the run is
// interrupted) or returns leaving something behind, nothing it started
// writes on (commit d72c32b: Run waits until the sandbox's PID namespace
// is gone). Each command starts a writer appending to a file of the
// workspace; once massgen has exited, the file and its copies (snapshots,
// the final copy, the logs) keep their size, no process of the sandbox is
// left, and nothing outside the workspace changed. TestProcessesLeftBehind
// has the sleepers left behind; these write.
func TestStoppedCommandsWriteNoMore(t *testing.T) {
	needBwrap(t)
	// The writer: a loop appending to w.txt of the workspace, its command
	// line holding the tag.
	writer := func(tag string) string {
		return "while :; do echo x >> w.txt; sleep 0.05; done; : " + tag
	}
	type stop struct {
		cmd func(tag string) string
		top map[string]any // the config's other top-level keys
		// args are massgen's options before the config.
		args []string
		// interrupt: massgen gets SIGINT once the writer is writing.
		interrupt bool
		// want is what the run must say (stdout or stderr) to show the
		// stop happened as meant; "" for nothing.
		want string
	}
	never := func(tag string) string {
		return "(sleep 1; " + writer(tag) + ") & sleep 1000; : " + tag
	}
	attacks := map[string]stop{
		"the turn times out while a background writer runs": {
			cmd:  never,
			top:  map[string]any{"timeout_settings": map[string]any{"agent_turn_timeout_seconds": 10}},
			want: "turn timed out",
		},
		"the run's deadline passes while a background writer runs": {
			cmd:  never,
			args: []string{"--orchestrator-timeout", "20"},
			want: "timed out",
		},
		"the run is interrupted (SIGINT) while a background writer runs": {
			cmd:       never,
			interrupt: true,
		},
		"the command returns at once: setsid writer": {
			cmd: func(tag string) string {
				return "setsid sh -c '" + writer(tag) + "' > /dev/null 2>&1 & sleep 1; : " + tag
			},
		},
		"the command returns at once: nohup writer": {
			cmd: func(tag string) string {
				return "nohup sh -c '" + writer(tag) + "' > /dev/null 2>&1 & sleep 1; : " + tag
			},
		},
		"the command returns at once: double-forked writer": {
			cmd: func(tag string) string {
				return "( sh -c '" + writer(tag) + "' & ) ; sleep 1; : " + tag
			},
		},
		"the command returns at once: disowned writer": {
			cmd: func(tag string) string {
				return "bash -c '( " + writer(tag) + " ) > /dev/null 2>&1 & disown; sleep 1; : " + tag + "'"
			},
		},
	}
	for name, a := range attacks {
		attempt(t, name, func(t *testing.T) {
			t.Parallel()
			tag := "massgen-attack-writer-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			t.Cleanup(func() { killMatching(tag) })
			dir := tempDir(t)
			out := filepath.Join(dir, plantedDir)
			writeFiles(t, out, map[string]string{"keep.txt": "the user's"})
			before := snap(t, out)
			s := team{coord: []call{sh(a.cmd(tag))}, top: a.top}
			must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), s.yaml(), 0o644))
			o := runOpts{timeout: 150 * time.Second}
			if a.interrupt {
				o.started = func(p *os.Process) {
					go func() {
						// Once the writer writes (or the run is over).
						for i := 0; i < 600; i++ {
							if ws := workspaceOf(dir); ws != "" {
								if fi, err := os.Stat(filepath.Join(ws, "w.txt")); err == nil && fi.Size() > 0 {
									break
								}
							}
							time.Sleep(100 * time.Millisecond)
						}
						p.Signal(syscall.SIGINT)
					}()
				}
			}
			args := append(append([]string{"--display", "plain", "--log-dir", "logs"}, a.args...), "--config", "c.yaml", "Do the task.")
			r := massgen(t, dir, o, args...)
			t.Logf("exit %d after %s", r.code, r.dur.Round(time.Millisecond))
			if r.timedOut {
				t.Fatalf("massgen did not end within %s:\n%s", o.timeout, r)
			}
			first := writerSizes(dir, "w.txt")
			if ws := workspaceOf(dir); ws == "" || first[filepath.Join(ws, "w.txt")] == 0 {
				t.Fatalf("the writer never wrote to the workspace (the attack did not run):\n%s", r)
			}
			if a.want != "" && !strings.Contains(r.stdout+r.stderr, a.want) {
				t.Errorf("the run does not say %q:\n%s", a.want, r)
			}
			// The writer wrote every 50 ms: in 3 s, one still running
			// would have written about 60 lines.
			time.Sleep(3 * time.Second)
			if ps := procsMatching(tag); len(ps) > 0 {
				t.Errorf("processes of the command survive the run (exit %d):\n%s", r.code, strings.Join(ps, "\n"))
			}
			then := writerSizes(dir, "w.txt")
			var grew []string
			for p, n := range then {
				if n != first[p] {
					grew = append(grew, fmt.Sprintf("%s: %d bytes when massgen exited, %d 3 s later", p, first[p], n))
				}
			}
			if len(grew) > 0 {
				t.Errorf("the writer writes on after the run:\n%s", strings.Join(grew, "\n"))
			}
			unchanged(t, "the directory outside", out, before)
			noCanary(t, r)
		})
	}
}
