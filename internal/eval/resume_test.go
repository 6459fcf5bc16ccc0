package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/llmsim"
)

// cancelAfter is a progress writer that cancels the evaluation once n runs
// have finished.
type cancelAfter struct {
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n -= strings.Count(string(p), "\n"); c.n <= 0 {
		c.cancel()
	}
	return len(p), nil
}

// An evaluation stopped half-way keeps every finished run in its journal
// (a torn last line, as a kill mid-write leaves, is dropped); resuming it
// runs only what is missing, and the results are those of an uninterrupted
// evaluation. A resume with another spec is refused.
func TestEvalResumesFromItsJournal(t *testing.T) {
	dir, ds := simDir(t, 12)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, err := evaluate(t, ctx, dir, ds, true, func(o *Options) { o.Progress = &cancelAfter{n: 15, cancel: cancel} })
	if err == nil || res == nil || res.Complete {
		t.Fatalf("interrupted evaluation: err %v, complete %v", err, res != nil && res.Complete)
	}
	jpath := filepath.Join(dir, "out", JournalFile)
	_, before, err := ReadJournal(jpath)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) < 15 || len(before) >= 48 {
		t.Fatalf("the journal holds %d runs after stopping at 15 of 48", len(before))
	}
	f, _ := os.OpenFile(jpath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"system":"team_independent","item":"i0`)
	f.Close()

	// Another spec is not this evaluation.
	if _, err := evaluate(t, t.Context(), dir, ds, true, func(o *Options) { o.Resume, o.Spec.Epochs = true, 2 }); err == nil || !strings.Contains(err.Error(), "epochs 1, now 2") {
		t.Fatalf("resume with other epochs: %v", err)
	}
	res, err = evaluate(t, t.Context(), dir, ds, true, func(o *Options) { o.Resume = true })
	if err != nil || !res.Complete {
		t.Fatalf("resumed: %v, complete %v", err, res != nil && res.Complete)
	}
	_, after, err := ReadJournal(jpath)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range after {
		seen[fmt.Sprintf("%s %s %d", r.System, r.Item, r.Epoch)]++
	}
	if len(after) != 48 || len(seen) != 48 {
		t.Fatalf("after the resume the journal holds %d runs of %d distinct (system, item, epoch); want 48 once each", len(after), len(seen))
	}
	for i := range before {
		if after[i].Item != before[i].Item || after[i].System != before[i].System || after[i].Answer != before[i].Answer {
			t.Fatalf("run %d changed across the resume", i)
		}
	}
	checkTruth(t, dir, res, 0)
}

// checkTruth checks each item score against the simulator's draws for the
// request seed.
func checkTruth(t *testing.T, dir string, res *Results, seed int64) {
	t.Helper()
	sc, err := llmsim.LoadScenario(filepath.Join(dir, "quality.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	right := func(m, id string) bool { return sc.Quality.Right("evalsim-"+m, id, seed) }
	for _, ir := range res.Items {
		want := false
		if m, ok := strings.CutPrefix(ir.System, "team_independent/"); ok {
			want = right(m, ir.Item)
		} else {
			want = right("a", ir.Item) || right("b", ir.Item) && right("c", ir.Item)
		}
		if (ir.Score == 1) != want {
			t.Errorf("%s on %s: score %v, truth %v", ir.System, ir.Item, ir.Score, want)
		}
	}
}

// With --epoch-seed each epoch sends its number as the seed parameter,
// and the simulator draws afresh per seed: each epoch's score is the draw
// for that seed, and the item's score is their reduction.
func TestEvalEpochsDrawPerSeedAndReduce(t *testing.T) {
	dir, ds := simDir(t, 8)
	res, err := evaluate(t, t.Context(), dir, ds, true, func(o *Options) {
		o.Spec.Epochs, o.Spec.EpochSeed, o.Spec.Reducer = 3, true, "mode"
	})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := llmsim.LoadScenario(filepath.Join(dir, "quality.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	differ := 0
	for _, ir := range res.Items {
		m, ok := strings.CutPrefix(ir.System, "team_independent/")
		if !ok {
			continue
		}
		if len(ir.Runs) != 3 {
			t.Fatalf("%s %s: %d runs", ir.System, ir.Item, len(ir.Runs))
		}
		ones := 0
		for _, r := range ir.Runs {
			want := sc.Quality.Right("evalsim-"+m, ir.Item, int64(r.Epoch))
			if (r.Score == 1) != want {
				t.Errorf("%s %s epoch %d: score %v, the draw for seed %d says %v", ir.System, ir.Item, r.Epoch, r.Score, r.Epoch, want)
			}
			if r.Score == 1 {
				ones++
			}
		}
		if ones == 1 || ones == 2 {
			differ++
		}
		if want := map[bool]float64{true: 1, false: 0}[ones >= 2]; ir.Score != want {
			t.Errorf("%s %s: mode of %d right of 3 is %v, want %v", ir.System, ir.Item, ones, ir.Score, want)
		}
	}
	if differ == 0 {
		t.Error("no item had epochs that disagree: the seed did not reach the simulator")
	}
	// The seed goes to every agent: an API that refuses it is refused first.
	env := testEnv(t, dir)
	if _, err := SeedSystems(env, []string{filepath.Join(dir, "team_independent.yaml")}, true); err != nil {
		t.Errorf("a simulated team: %v", err)
	}
	claude := filepath.Join(dir, "claude.yaml")
	os.WriteFile(claude, []byte("agents:\n  - id: c\n    backend: {type: claude, model: claude-sonnet-4-5}\n"), 0o644)
	if _, err := SeedSystems(env, []string{claude}, false); err == nil || !strings.Contains(err.Error(), "agent c of "+claude+" is on claude") {
		t.Errorf("a Claude agent with --epoch-seed: %v", err)
	}
}

// The model-graded judge is any configured model: here a simulated one
// that always grades P, through app like any run.
func TestEvalJudgeScoresThroughAModel(t *testing.T) {
	dir, ds := simDir(t, 3)
	judgeCfg := filepath.Join(dir, "judge.yaml")
	os.WriteFile(judgeCfg, []byte(`agents:
  - id: grader
    backend:
      type: sim
      model: evalsim-judge
      scenario: {models: {evalsim-judge: {answer: "The submission is close.\nGRADE: P"}}}
`), 0o644)
	env := testEnv(t, dir)
	res, err := evaluate(t, t.Context(), dir, ds, false, func(o *Options) {
		o.Scorer = &Judge{Env: env, Config: judgeCfg}
		o.Spec.Scorer = o.Scorer.Name()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ir := range res.Items {
		if r := ir.Runs[0]; r.Score != 0.5 || r.Extracted != "P" || !strings.Contains(r.Explanation, "GRADE: P") {
			t.Errorf("%s: %+v", ir.Item, r)
		}
	}
	if res.Spec.Scorer != "judge:config="+judgeCfg {
		t.Errorf("scorer name %q", res.Spec.Scorer)
	}
}

// Each run has the evaluation's deadline: a team too slow for it times
// out, is scored 0 with the reason, and the evaluation goes on.
func TestEvalDeadlinePerItem(t *testing.T) {
	dir, ds := simDir(t, 2)
	cfg, _ := os.ReadFile(filepath.Join(dir, "team_independent.yaml"))
	slow := strings.ReplaceAll(string(cfg), "scenario: quality.yaml}", "scenario: quality.yaml, ttft_ms: 20000}")
	os.WriteFile(filepath.Join(dir, "team_independent.yaml"), []byte(slow), 0o644)
	res, err := evaluate(t, t.Context(), dir, ds, false, func(o *Options) { o.Spec.TimeoutSeconds = 0.3 })
	if err != nil {
		t.Fatal(err)
	}
	s := system(t, res, "team_independent")
	if s.Errors != 2 || s.Accuracy != 0 {
		t.Errorf("errors %d, accuracy %v", s.Errors, s.Accuracy)
	}
	for _, ir := range res.Items {
		if r := ir.Runs[0]; r.Status != "timeout" || !strings.Contains(r.Error, "timeout") || r.LatencyMS > 15000 {
			t.Errorf("%s: status %s, error %q, %v ms", ir.Item, r.Status, r.Error, r.LatencyMS)
		}
	}
}

// Each run has the evaluation's budget: with a token budget smaller than
// one agent's first turn, coordination stops once the first answers are
// in (one of them wins, with no votes and no presentation) and the team
// spends less than without one. How many first answers land before the
// budget stops the run depends on timing: never more than without it.
func TestEvalBudgetPerItem(t *testing.T) {
	dir, ds := simDir(t, 3)
	free, err := evaluate(t, t.Context(), dir, ds, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "out"))
	capped, err := evaluate(t, t.Context(), dir, ds, false, func(o *Options) { o.Spec.MaxTokens = 10 })
	if err != nil {
		t.Fatal(err)
	}
	for i := range free.Items {
		f, c := free.Items[i].Runs[0], capped.Items[i].Runs[0]
		if c.InputTokens+c.OutputTokens >= f.InputTokens+f.OutputTokens || c.Answers > f.Answers || c.Answer == "" {
			t.Errorf("%s: with a 10-token budget %d tokens and %d answers, without %d tokens and %d answers (answer %q)",
				c.Item, c.InputTokens+c.OutputTokens, c.Answers, f.InputTokens+f.OutputTokens, f.Answers, c.Answer)
		}
	}
}
