package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"time"
)

// Schema and SchemaVersion name the results file's format (docs/eval.md).
// A reader checks both; the version grows when a field changes meaning or
// goes away, not when one is added.
const (
	Schema        = "massgen-eval-results"
	SchemaVersion = 1
)

// System is one contestant: a team config, or one member of a team alone.
type System struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"` // "team" or "member"
	Config string `json:"config"`
	Agent  string `json:"agent,omitempty"` // the member, for kind member
	Team   string `json:"team,omitempty"`  // the team it is a member of
}

// Run is one item run once by one system: what the journal holds, one line
// each.
type Run struct {
	System       string         `json:"system"`
	Item         string         `json:"item"`
	Epoch        int            `json:"epoch"`
	Status       string         `json:"status"` // the run's: completed, failed, timeout, interrupted
	Answer       string         `json:"answer"`
	Score        float64        `json:"score"`
	Extracted    string         `json:"extracted,omitempty"`
	Explanation  string         `json:"explanation,omitempty"`
	Error        string         `json:"error,omitempty"`       // why the run, or its scoring, failed
	ScoreError   bool           `json:"score_error,omitempty"` // the scorer failed (the run did not)
	Winner       string         `json:"winner,omitempty"`
	Votes        map[string]int `json:"votes,omitempty"`
	Answers      int            `json:"answers"`
	Restarts     int            `json:"restarts"` // agent turns cancelled by a newer answer
	Attempts     int            `json:"attempts"` // orchestration attempts (1 + post-evaluation restarts)
	InputTokens  int64          `json:"input_tokens"`
	OutputTokens int64          `json:"output_tokens"`
	CostUSD      float64        `json:"cost_usd"`
	LatencyMS    float64        `json:"latency_ms"` // wall time of the run, team build included
	LogDir       string         `json:"log_dir,omitempty"`
	Finished     time.Time      `json:"finished"`
}

// Spec is what an evaluation is: the journal's first line, checked on
// resume, and the head of the results.
type Spec struct {
	Dataset       string    `json:"dataset"`
	DatasetSHA256 string    `json:"dataset_sha256"`
	Items         int       `json:"items"`
	Configs       []string  `json:"configs"`
	Baselines     bool      `json:"baselines"`
	Systems       []System  `json:"systems"`
	Scorer        string    `json:"scorer"`
	JudgePrompt   string    `json:"judge_prompt,omitempty"` // a judge's own prompt (--judge-prompt)
	Epochs        int       `json:"epochs"`
	Reducer       string    `json:"reducer"`
	EpochSeed     bool      `json:"epoch_seed,omitempty"`
	Bootstrap     Bootstrap `json:"bootstrap"`
	// Per run: the deadline (seconds) and budget, 0 = the config's.
	TimeoutSeconds float64   `json:"timeout_seconds,omitempty"`
	MaxCostUSD     float64   `json:"max_cost_usd,omitempty"`
	MaxTokens      int64     `json:"max_tokens,omitempty"`
	Started        time.Time `json:"started"`
}

// Results is the results file.
type Results struct {
	Schema      string          `json:"schema"`
	Version     int             `json:"version"`
	Spec        Spec            `json:"spec"`
	Finished    time.Time       `json:"finished"`
	Complete    bool            `json:"complete"` // every run of the spec is in
	Systems     []SystemSummary `json:"systems"`
	Comparisons []Comparison    `json:"comparisons,omitempty"`
	Items       []ItemResult    `json:"items"`
}

// SystemSummary sums a system up over the items.
type SystemSummary struct {
	System
	Items    int     `json:"items"`  // items with at least one run
	Runs     int     `json:"runs"`   // runs (items × epochs)
	Errors   int     `json:"errors"` // runs that failed or could not be scored (scored 0)
	Accuracy float64 `json:"accuracy"`
	// AccuracyCI is the bootstrap interval of the accuracy (over items).
	AccuracyCI [2]float64 `json:"accuracy_ci"`
	Correct    float64    `json:"correct"` // the sum of the item scores
	CostUSD    float64    `json:"cost_usd"`
	// CostPerCorrectUSD is the cost of all the system's runs over the
	// correct answers it gave (item scores summed over epochs); null when
	// none was correct.
	CostPerCorrectUSD *float64 `json:"cost_per_correct_usd"`
	InputTokens       int64    `json:"input_tokens"`
	OutputTokens      int64    `json:"output_tokens"`
	Latency           Latency  `json:"latency_ms"`
	MeanRestarts      float64  `json:"mean_restarts"`
}

// Latency percentiles of a system's runs, in milliseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Comparison is system A against system B on the items both ran: the
// accuracy difference A−B with its paired bootstrap interval.
type Comparison struct {
	A          string     `json:"a"`
	B          string     `json:"b"`
	Why        string     `json:"why,omitempty"` // "team vs its best member"
	Items      int        `json:"items"`
	AccuracyA  float64    `json:"accuracy_a"`
	AccuracyB  float64    `json:"accuracy_b"`
	Difference float64    `json:"difference"`
	CI         [2]float64 `json:"ci"`
}

// ItemResult is one item as one system did it: the epochs' runs and their
// reduced score.
type ItemResult struct {
	Item   string  `json:"item"`
	System string  `json:"system"`
	Score  float64 `json:"score"`
	Runs   []Run   `json:"runs"`
}

// Summarise computes the results of spec from its runs (any order; later
// duplicates of a (system, item, epoch) win).
func Summarise(spec Spec, itemOrder []string, runs []Run) (*Results, error) {
	type key struct {
		sys, item string
		epoch     int
	}
	latest := map[key]Run{}
	for _, r := range runs {
		latest[key{r.System, r.Item, r.Epoch}] = r
	}
	res := &Results{Schema: Schema, Version: SchemaVersion, Spec: spec, Finished: time.Now().UTC()}
	scores := map[string]map[string]float64{} // system → item → score
	expected := 0
	for _, sys := range spec.Systems {
		sum := SystemSummary{System: sys}
		scores[sys.Name] = map[string]float64{}
		var lat []float64
		var itemScores []float64
		restarts := 0
		for _, id := range itemOrder {
			var its []Run
			for e := 1; e <= spec.Epochs; e++ {
				expected++
				if r, ok := latest[key{sys.Name, id, e}]; ok {
					its = append(its, r)
				}
			}
			if len(its) == 0 {
				continue
			}
			vals := make([]float64, len(its))
			for i, r := range its {
				vals[i] = r.Score
				sum.Runs++
				if r.Error != "" {
					sum.Errors++
				}
				sum.CostUSD += r.CostUSD
				sum.InputTokens += r.InputTokens
				sum.OutputTokens += r.OutputTokens
				sum.Correct += r.Score
				restarts += r.Restarts
				lat = append(lat, r.LatencyMS)
			}
			v, err := Reduce(spec.Reducer, vals)
			if err != nil {
				return nil, err
			}
			sum.Items++
			itemScores = append(itemScores, v)
			scores[sys.Name][id] = v
			res.Items = append(res.Items, ItemResult{Item: id, System: sys.Name, Score: v, Runs: its})
		}
		sum.Accuracy, sum.AccuracyCI[0], sum.AccuracyCI[1] = spec.Bootstrap.MeanCI(itemScores)
		if sum.Correct > 0 {
			c := sum.CostUSD / sum.Correct
			sum.CostPerCorrectUSD = &c
		}
		if sum.Runs > 0 {
			sum.MeanRestarts = float64(restarts) / float64(sum.Runs)
			slices.Sort(lat)
			sum.Latency = Latency{Mean: mean(lat), P50: Quantile(lat, 0.5), P90: Quantile(lat, 0.9), P99: Quantile(lat, 0.99), Max: lat[len(lat)-1]}
		}
		res.Systems = append(res.Systems, sum)
	}
	res.Complete = len(latest) >= expected
	// Each team against its best member (the member with the highest
	// accuracy; the first in config order on a tie).
	for _, team := range res.Systems {
		if team.Kind != "team" {
			continue
		}
		best := -1
		for i, m := range res.Systems {
			if m.Kind == "member" && m.Team == team.Name && (best < 0 || m.Accuracy > res.Systems[best].Accuracy) {
				best = i
			}
		}
		if best >= 0 {
			c := Compare(spec.Bootstrap, team.Name, res.Systems[best].Name, scores[team.Name], scores[res.Systems[best].Name])
			c.Why = "team vs its best member"
			res.Comparisons = append(res.Comparisons, c)
		}
	}
	return res, nil
}

// Compare is A against B on the items both have.
func Compare(b Bootstrap, nameA, nameB string, a, bs map[string]float64) Comparison {
	var xa, xb []float64
	for _, id := range slices.Sorted(maps.Keys(a)) {
		if v, ok := bs[id]; ok {
			xa, xb = append(xa, a[id]), append(xb, v)
		}
	}
	c := Comparison{A: nameA, B: nameB, Items: len(xa), AccuracyA: mean(xa), AccuracyB: mean(xb)}
	c.Difference, c.CI[0], c.CI[1] = b.PairedCI(xa, xb)
	return c
}

// WriteResults writes res to path (through a temporary file, so a reader
// never sees half of it).
func WriteResults(path string, res *Results) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(data, '\n'))
}

// ReadResults reads a results file, checking its schema and version.
func ReadResults(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if res.Schema != Schema {
		return nil, fmt.Errorf("%s is not a massgen eval results file (schema %q)", path, res.Schema)
	}
	if res.Version > SchemaVersion {
		return nil, fmt.Errorf("%s has results version %d; this massgen reads up to %d", path, res.Version, SchemaVersion)
	}
	return &res, nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// finite replaces NaN and infinities (which JSON cannot hold) by 0.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
