package orchestrator

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

var recordRun = flag.Bool("record", false, "rewrite the recorded run that internal/coord replays (../coord/testdata/runs/)")

const recordedRun = "../coord/testdata/runs/three_agents_restart.jsonl"

// TestRecordedRunReplays runs a real run (three agents on fake models: a
// mid-stream failure and its backoff, answers, votes, a presentation, a
// post-evaluation that restarts, a second attempt) with a Trace, writes the
// trace as a replay log, reads it back, and replays its inputs through a
// fresh Machine: the commands must be those the run got. With -record, the
// log is also stored for internal/coord's TestRecordedRunsReplay, so a rule
// change that would alter this run shows there.
func TestRecordedRunReplays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log coord.Log
		settings := coord.Settings{MaxRestarts: 1}
		a := fake("a", fakeReply{when: "evaluation", restart: "the answer lacks a source"})
		b := fake("b")
		b.outageErr, b.outageCalls = &llm.Error{Provider: "fake", Retry: true, Message: "stream cut mid-way"}, 1
		agents := fakeTeam(a, b, fake("c"))
		res, _ := run(t, agents, Options{Settings: settings, Trace: func(in coord.Input, out []coord.Command) {
			log.Steps = append(log.Steps, coord.Record{In: in, Out: out})
		}})
		if res.Status != Completed || res.Attempts != 2 {
			t.Fatalf("status=%s attempts=%d (%v), want completed in two attempts", res.Status, res.Attempts, res.Err)
		}
		for _, ag := range agents {
			log.Config.Agents = append(log.Config.Agents, ag.ID)
		}
		log.Config.Settings = settings

		kinds := map[string]bool{}
		for _, s := range log.Steps {
			kinds[coord.InputKind(s.In)] = true
		}
		for _, k := range []string{"start", "proposed", "turn_failed", "presented", "evaluated"} {
			if !kinds[k] {
				t.Errorf("the recorded run has no %s input; it does not exercise what it should", k)
			}
		}

		var buf bytes.Buffer
		if _, err := log.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		stored := slices.Clone(buf.Bytes())
		back, err := coord.ReadLog(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(log.Steps, back.Replay(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("replaying the run's inputs gives other commands (-run +replay):\n%s", diff)
		}
		if *recordRun {
			if err := os.MkdirAll(filepath.Dir(recordedRun), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(recordedRun, stored, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}
