package eval

import (
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/eval/dataset"
)

func TestScorers(t *testing.T) {
	free := dataset.Item{ID: "f", Question: "Capital of France?", Target: []string{"Paris"}}
	num := dataset.Item{ID: "n", Question: "6×7?", Target: []string{"42"}}
	big := dataset.Item{ID: "b", Question: "population?", Target: []string{"1000"}}
	mc := dataset.Item{ID: "c", Question: "Largest planet?", Choices: []string{"Mars", "Jupiter", "Venus"}, Target: []string{"B"}}
	cases := []struct {
		scorer string
		item   dataset.Item
		answer string
		want   float64
	}{
		{"exact", free, "Paris", 1},
		{"exact", free, " Paris\n", 1},
		{"exact", free, "paris", 0},
		{"exact", free, "The answer is Paris.", 0},
		{"match", free, "paris.", 1},
		{"match", free, "The capital is below.\nANSWER: The Paris", 1},
		{"match", free, "I think\nParis!", 1},
		{"match", free, "Lyon", 0},
		{"match", free, "Not Paris", 0},
		{"numeric", num, "6 times 7 is 42", 1},
		{"numeric", num, "ANSWER: 42.0", 1},
		{"numeric", num, "41", 0},
		{"numeric", num, "no idea", 0},
		{"numeric:0.5", num, "42.4", 1},
		{"numeric:0.5", num, "42.6", 0},
		{"numeric:1%", big, "1,009", 1},
		{"numeric:1%", big, "1011", 0},
		{"choice", mc, "B", 1},
		{"choice", mc, "(b)", 1},
		{"choice", mc, "Let me think.\nANSWER: B", 1},
		{"choice", mc, "Jupiter", 1},
		{"choice", mc, "A) Mars", 0},
		{"choice", mc, "none", 0},
		{"auto", mc, "ANSWER: B", 1},
		{"auto", num, "It is 42", 1},
		{"auto", free, "paris", 1},
		{"regex", dataset.Item{ID: "r", Question: "q", Target: []string{`(?i)\bparis\b`}}, "It's PARIS of course", 1},
		{"regex", dataset.Item{ID: "r", Question: "q", Target: []string{`^\d+$`}}, "12a", 0},
		{`regex:Final: (\w+)`, free, "blah\nFinal: Paris", 1},
		{`regex:Final: (\w+)`, free, "blah\nFinal: Rome", 0},
	}
	for _, c := range cases {
		s, err := ParseScorer(c.scorer)
		if err != nil {
			t.Fatalf("%s: %v", c.scorer, err)
		}
		got, err := s.Score(t.Context(), c.item, c.answer)
		if err != nil {
			t.Errorf("%s on %q: %v", c.scorer, c.answer, err)
			continue
		}
		if got.Value != c.want {
			t.Errorf("%s on %q (target %v): %v, want %v (extracted %q)", c.scorer, c.answer, c.item.Target, got.Value, c.want, got.Extracted)
		}
	}
	for _, bad := range []string{"nope", "numeric:x", "numeric:-1", "regex:(", "exact:1"} {
		if _, err := ParseScorer(bad); err == nil {
			t.Errorf("ParseScorer(%q) accepted", bad)
		}
	}
}

func TestReducers(t *testing.T) {
	xs := []float64{1, 0, 1, 1, 0}
	for name, want := range map[string]float64{"mean": 0.6, "max": 1, "min": 0, "median": 1, "mode": 1} {
		if got, err := Reduce(name, xs); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: %v %v, want %v", name, got, err, want)
		}
	}
	if got, _ := Reduce("mode", []float64{0, 1}); got != 1 {
		t.Errorf("mode of a tie: %v, want the higher", got)
	}
	if _, err := Reduce("avg", xs); err == nil {
		t.Error("unknown reducer accepted")
	}
}

// The bootstrap is reproducible by its seed, its interval holds the mean,
// and over many samples from a known rate the 95% interval covers the rate
// about 95% of the time.
func TestBootstrapIntervals(t *testing.T) {
	b := Bootstrap{Resamples: 500, Seed: 9, Confidence: 0.95}
	xs := []float64{1, 1, 0, 1, 0, 0, 1, 1, 1, 0}
	m, lo, hi := b.MeanCI(xs)
	m2, lo2, hi2 := b.MeanCI(xs)
	if m != 0.6 || lo > m || hi < m || lo != lo2 || hi != hi2 || m2 != m {
		t.Fatalf("MeanCI: %v [%v, %v], again %v [%v, %v]", m, lo, hi, m2, lo2, hi2)
	}
	// Coverage: 200 samples of 100 draws at 0.3 from a fixed generator.
	q := &qualityDraws{seed: 5}
	covered := 0
	for range 200 {
		sample := make([]float64, 100)
		for i := range sample {
			if q.next() < 0.3 {
				sample[i] = 1
			}
		}
		if _, lo, hi := b.MeanCI(sample); lo <= 0.3 && 0.3 <= hi {
			covered++
		}
	}
	if covered < 180 || covered > 199 { // 95% of 200 is 190, ±3 standard deviations
		t.Errorf("the 95%% interval covered the true rate in %d of 200 samples", covered)
	}
	// Paired: a constant lead has a zero-width interval at the lead.
	d, lo, hi := b.PairedCI([]float64{1, 1, 0, 1}, []float64{0, 1, 0, 0})
	if d != 0.5 || lo < 0 || hi > 1 {
		t.Errorf("PairedCI: %v [%v, %v]", d, lo, hi)
	}
}

type qualityDraws struct{ seed uint64 }

func (q *qualityDraws) next() float64 {
	q.seed += 0x9e3779b97f4a7c15
	z := q.seed
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return float64((z^(z>>31))>>11) / (1 << 53)
}

// A Python scorer runs through the custom-tool runner: the example
// grade.py reads the answer's last line.
func TestPythonScorer(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	file, _ := filepath.Abs("../../examples/eval/grade.py")
	p, err := NewPython(t.Context(), file+":grade", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	it := dataset.Item{ID: "x", Question: "Capital?", Target: []string{"Paris"}}
	for answer, want := range map[string]float64{"thinking\nANSWER: Paris": 1, "Paris.": 1, "ANSWER: Rome": 0} {
		s, err := p.Score(t.Context(), it, answer)
		if err != nil || s.Value != want || s.Explanation == "" {
			t.Errorf("%q: %+v %v, want %v", answer, s, err, want)
		}
	}
	if _, err := NewPython(t.Context(), file+":missing", func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing function: %v", err)
	}
	for text, ok := range map[string]bool{"0.5": true, "true": true, `{"score": 1}`: true, "2": false, `{"x": 1}`: false, "yes": false} {
		if _, err := parsePythonScore(text); (err == nil) != ok {
			t.Errorf("parsePythonScore(%q): %v", text, err)
		}
	}
}

func TestJudgePromptTemplate(t *testing.T) {
	it := dataset.Item{Question: "Q?", Target: []string{"T1", "T2"}, Choices: []string{"x", "y"}}
	got := JudgePrompt("q={question} t={target} a={answer} c={choices}", it, "ANS")
	if got != "q=Q? t=T1 | T2 a=ANS c=A) x\nB) y" {
		t.Errorf("%q", got)
	}
	if !strings.Contains(JudgePrompt("", it, "ANS"), "[Submission]: ANS") {
		t.Error("the default prompt lacks the submission")
	}
}
