package coord

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every golden transcript, turned into the replay log a run would have
// written (its config, then each input with the commands it gave, through
// the log's encoding), replays through Log.Check — the path `massgen
// replay` takes — to the same transcript: the same decisions, described
// the same way.
func TestTranscriptsReplayFromTheirLogs(t *testing.T) {
	scripts, _ := filepath.Glob("testdata/*.script")
	for _, path := range scripts {
		name := strings.TrimSuffix(filepath.Base(path), ".script")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			log := scriptLog(t, string(src))
			var b strings.Builder
			if _, err := log.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			read, err := ReadLog(strings.NewReader(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			if d := read.Check(func(_ int, in Input, out []Command, m *Machine) {
				fmt.Fprintf(&got, "> %s\n", DescribeInput(in))
				for _, c := range out {
					fmt.Fprintf(&got, "  %s\n", DescribeCommand(c))
				}
				fmt.Fprintf(&got, "  = %s\n", m.DescribeState())
			}); d != nil {
				t.Fatalf("the log of its own run diverges at step %d", d.Step)
			}
			golden, err := os.ReadFile(strings.TrimSuffix(path, ".script") + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for _, line := range strings.Split(string(golden), "\n") {
				if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "> config") {
					continue
				}
				want.WriteString(line + "\n")
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("replayed transcript differs from the golden one (-golden +replayed):\n%s", diff)
			}
		})
	}
}

// A log whose recorded commands no longer follow from its inputs (the
// rules changed, or it was edited) is caught at the first such step.
func TestCheckFindsTheFirstDivergingStep(t *testing.T) {
	src, err := os.ReadFile("testdata/consensus.script")
	if err != nil {
		t.Skip("no consensus transcript")
	}
	log := scriptLog(t, string(src))
	if d := log.Check(nil); d != nil {
		t.Fatalf("an untouched log diverges at %d", d.Step)
	}
	log.Steps[2].Out = log.Steps[2].Out[:len(log.Steps[2].Out)-1]
	if d := log.Check(nil); d == nil || d.Step != 2 {
		t.Errorf("divergence %+v, want step 2", d)
	}
}

// scriptLog runs a transcript script through a machine and returns the
// replay log that run would have written.
func scriptLog(t *testing.T, src string) *Log {
	cfg := Config{Agents: []string{"a", "b", "c"}, Settings: Settings{FirstAnswers: FirstAnswersEager, MaxAnswers: Unlimited}}
	var m *Machine
	log := &Log{}
	for n, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := fields(line)
		if f[0] == "config" {
			configure(t, &cfg, f[1:], n+1)
			continue
		}
		if m == nil {
			m = New(cfg)
			log.Config = cfg
		}
		in := parseInput(t, f, n+1)
		log.Steps = append(log.Steps, Record{In: in, Out: m.Step(in)})
	}
	return log
}
