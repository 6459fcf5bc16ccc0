package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/eval"
	"github.com/massgen/massgen/internal/eval/dataset"
)

func evalExample(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", "eval", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// massgen eval on the shipped simulated team: every item through the team
// and each member alone, the files written, the summary printed; compare
// of a result with itself is a zero difference; --resume of a finished
// evaluation runs nothing more, and cannot change what it evaluates.
func TestEvalCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ev")
	r := runIn(t, dir, "", nil, "eval", evalExample(t, "quiz.jsonl"), "--config", evalExample(t, "sim_team.yaml"), "--baselines", "--out", out, "--concurrency", "3")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"sim_team ", "sim_team/strong", "sim_team/medium", "sim_team/weak", "sim_team vs sim_team/", "report: " + filepath.Join(out, "report.md")} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "eval: [120/120]") {
		t.Errorf("progress: %s", r.stderr)
	}
	res, err := eval.ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Systems) != 4 || len(res.Items) != 120 || res.Spec.Scorer != "auto" {
		t.Fatalf("results: complete %v, %d systems, %d items, scorer %s", res.Complete, len(res.Systems), len(res.Items), res.Spec.Scorer)
	}
	// The results file is plain JSON with the documented top-level keys.
	var raw map[string]any
	data, _ := os.ReadFile(filepath.Join(out, "results.json"))
	if err := json.Unmarshal(data, &raw); err != nil || raw["schema"] != "massgen-eval-results" || raw["version"] != 1.0 {
		t.Errorf("results.json head: %v %v %v", err, raw["schema"], raw["version"])
	}

	c := runIn(t, dir, "", nil, "eval", "compare", out, filepath.Join(out, "results.json"))
	if c.code != 0 || !strings.Contains(c.stdout, "| sim_team | sim_team |") || !strings.Contains(c.stdout, "+0.000 | [+0.000, +0.000]") {
		t.Errorf("compare: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}

	before, _ := os.ReadFile(filepath.Join(out, "journal.jsonl"))
	again := runIn(t, dir, "", nil, "eval", "--resume", out)
	after, _ := os.ReadFile(filepath.Join(out, "journal.jsonl"))
	if again.code != 0 || string(before) != string(after) || !strings.Contains(again.stderr, "30 items × 4 systems") {
		t.Errorf("resume of a finished evaluation: exit %d, journal grew %d → %d bytes\n%s", again.code, len(before), len(after), again.stderr)
	}
	if r := runIn(t, dir, "", nil, "eval", "--resume", out, "--epochs", "2"); r.code != 1 || !strings.Contains(r.stderr, "--epochs cannot change it") {
		t.Errorf("resume with --epochs: exit %d: %s", r.code, r.stderr)
	}
	if r := runIn(t, dir, "", nil, "eval", evalExample(t, "quiz.jsonl"), "--config", evalExample(t, "sim_team.yaml"), "--out", out); r.code != 1 || !strings.Contains(r.stderr, "already holds an evaluation") {
		t.Errorf("a second evaluation into the same directory: exit %d: %s", r.code, r.stderr)
	}
	for _, bad := range [][]string{{"eval", evalExample(t, "quiz.jsonl")}, {"eval", "--config", "x.yaml"},
		{"eval", evalExample(t, "quiz.jsonl"), "--config", evalExample(t, "sim_team.yaml"), "--scorer", "judge"},
		{"eval", evalExample(t, "quiz.jsonl"), "--config", evalExample(t, "sim_team.yaml"), "--reducer", "avg"}} {
		if r := runIn(t, dir, "", nil, bad...); r.code != 1 {
			t.Errorf("%v: exit %d, want 1: %s", bad, r.code, r.stderr)
		}
	}
}

// The CSV example reads as three items, one of them multiple choice.
func TestEvalExampleCSV(t *testing.T) {
	ds, err := dataset.Load(evalExample(t, "quiz.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Items) != 3 || ds.Items[1].Target[0] != "B" || ds.Items[0].Metadata["topic"] != "arithmetic" {
		t.Errorf("%+v", ds.Items)
	}
}

// BenchmarkEvalOverhead is the harness's cost per item: the same items of
// examples/eval/quiz.jsonl on the simulated team, once as `massgen eval`
// (one at a time, as the baseline runs them) and once as `massgen
// --no-logs QUESTION` per item, in-process, alternating within one
// benchmark run. It reports both in ms/item and the difference.
func BenchmarkEvalOverhead(b *testing.B) {
	ds, err := dataset.Load(evalExample(b, "quiz.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	team := evalExample(b, "sim_team.yaml")
	dir := b.TempDir()
	env := Env{Getenv: func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}, Stdin: strings.NewReader(""), Stdout: &discard{}, Stderr: &discard{}, WorkDir: dir}
	var one, harness time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		for _, it := range ds.Items {
			if code := Run(b.Context(), []string{"--config", team, "--no-logs", it.Prompt()}, env); code != 0 {
				b.Fatalf("massgen: exit %d", code)
			}
		}
		one += time.Since(start)
		start = time.Now()
		if code := Run(b.Context(), []string{"eval", evalExample(b, "quiz.jsonl"), "--config", team, "--concurrency", "1", "--out", filepath.Join(dir, "ev", string(rune('a'+i%26))+time.Now().Format("150405.000000"))}, env); code != 0 {
			b.Fatalf("massgen eval: exit %d", code)
		}
		harness += time.Since(start)
	}
	n := float64(b.N * len(ds.Items))
	perOne, perEval := float64(one.Microseconds())/1000/n, float64(harness.Microseconds())/1000/n
	b.ReportMetric(perOne, "ms/item-massgen")
	b.ReportMetric(perEval, "ms/item-eval")
	b.ReportMetric(perEval-perOne, "ms/item-overhead")
	b.ReportMetric(perEval/perOne, "eval/massgen")
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }
