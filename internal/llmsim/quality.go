package llmsim

import (
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/massgen/massgen/internal/eval/dataset"
)

// Quality makes simulated models right or wrong on the items of a dataset
// at known rates, so that an evaluation's statistics can be checked against
// the truth (massgen eval; docs/eval.md):
//
//	quality:
//	  seed: 7
//	  dataset: items.jsonl      # massgen eval's format; relative to the scenario file
//	  models:
//	    sim-a: {accuracy: 0.6}
//	    sim-b: {accuracy: 0.9, items: {q3: 0.0}}   # per-item rates win
//	    "*": {accuracy: 0.5}
//
// On a request about an item (its question appears in the task), a model
// with a rate p believes the item's target with probability p and a wrong
// answer otherwise. The draw is a pure function of (seed, the request's
// seed parameter, model, item id), so every request of one run agrees with
// itself and a rerun gets the same beliefs; a client that sends a different
// seed (massgen eval --epoch-seed) gets an independent draw. The model then
// acts on its belief in place of the default policy: it answers it (a line
// of its own, then "ANSWER: <belief>"), votes for the first answer that
// says it (or answers it when none does), and presents the winning answer
// as it stands. Scripted steps still come first.
//
// Wrong answers: another choice's letter for a multiple-choice item, the
// target plus or minus 1 to 3 for a number (models can agree on one), and
// for free text a wrong answer of the model's own (models never agree).
type Quality struct {
	Seed    uint64                  `yaml:"seed"`
	Dataset string                  `yaml:"dataset"`
	Models  map[string]ModelQuality `yaml:"models"`

	items []dataset.Item
}

// ModelQuality is how often one model is right: Accuracy on every item,
// Items per item id.
type ModelQuality struct {
	Accuracy float64            `yaml:"accuracy"`
	Items    map[string]float64 `yaml:"items"`
}

// SetItems gives the quality scenario its items directly (instead of a
// dataset file).
func (q *Quality) SetItems(items []dataset.Item) { q.items = items }

// load reads the dataset, relative to dir.
func (q *Quality) load(dir string) error {
	if q.Dataset == "" {
		if q.items == nil {
			return fmt.Errorf("quality: dataset is required (the items whose targets the models know)")
		}
		return nil
	}
	path := q.Dataset
	if !filepath.IsAbs(path) {
		if dir == "" {
			return fmt.Errorf("quality: dataset %s is relative, and this scenario has no file to be relative to: give an absolute path", path)
		}
		path = filepath.Join(dir, path)
	}
	ds, err := dataset.Load(path)
	if err != nil {
		return fmt.Errorf("quality: %w", err)
	}
	q.items = ds.Items
	return nil
}

func (q *Quality) validate() *fieldError {
	for name, m := range q.Models {
		if m.Accuracy < 0 || m.Accuracy > 1 {
			return &fieldError{[]any{"quality", "models", name, "accuracy"}, "must be between 0 and 1"}
		}
		for id, p := range m.Items {
			if p < 0 || p > 1 {
				return &fieldError{[]any{"quality", "models", name, "items", id}, "must be between 0 and 1"}
			}
		}
	}
	return nil
}

// modelQuality is one model's rates with the scenario's items and seed.
type modelQuality struct {
	q *Quality
	m ModelQuality
}

func (sc *Scenario) qualityFor(model string) *modelQuality {
	if sc == nil || sc.Quality == nil {
		return nil
	}
	m, ok := sc.Quality.Models[model]
	if !ok {
		if m, ok = sc.Quality.Models["*"]; !ok {
			return nil
		}
	}
	return &modelQuality{q: sc.Quality, m: m}
}

// Right is whether the model is right on the item for a request that
// carries reqSeed (0: none): the simulator's one draw, exported so that a
// test can compute the truth an evaluation must recover.
func (q *Quality) Right(model, itemID string, reqSeed int64) bool {
	mq := q.Models[model]
	if _, ok := q.Models[model]; !ok {
		mq = q.Models["*"]
	}
	return (&modelQuality{q: q, m: mq}).right(model, itemID, reqSeed)
}

func (mq *modelQuality) right(model, itemID string, reqSeed int64) bool {
	p := mq.m.Accuracy
	if v, ok := mq.m.Items[itemID]; ok {
		p = v
	}
	return unit(mq.q.draw(model, itemID, reqSeed, "right")) < p
}

func (q *Quality) draw(model, itemID string, reqSeed int64, kind string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%d\x00%s\x00%s\x00%s", q.Seed, reqSeed, model, itemID, kind)
	s := h.Sum64()
	return splitmix64(&s)
}

// unit maps 64 random bits to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }

// belief is what the model answers on the item.
func (mq *modelQuality) belief(model string, it dataset.Item, reqSeed int64) string {
	if mq.right(model, it.ID, reqSeed) {
		return it.Target[0]
	}
	r := mq.q.draw(model, it.ID, reqSeed, "wrong")
	if len(it.Choices) > 1 {
		k := dataset.ChoiceIndex(it.Choices, it.Target[0])
		j := int(r % uint64(len(it.Choices)-1))
		if j >= k {
			j++
		}
		return dataset.Letter(j)
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(it.Target[0]), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		d := float64(1 + r%3)
		if r&8 != 0 {
			d = -d
		}
		return strconv.FormatFloat(f+d, 'f', -1, 64)
	}
	return "Not " + it.Target[0] + " (a wrong answer of " + model + ")"
}

// qualityPlan is the response of a model with a quality rate to a request
// about one of the items, or nil when the request is about none of them
// (the default policy answers it then).
func qualityPlan(req *request, kind string, mq *modelQuality) *plan {
	task := req.lastUser()
	it, ok := dataset.Find(mq.q.items, task)
	if !ok {
		return nil
	}
	b := mq.belief(req.model, it, req.seed)
	p := &plan{}
	switch kind {
	case "vote", "answer":
		if kind == "vote" {
			answers := parseAnswers(task)
			for _, label := range req.voteEnum {
				if sameAnswer(beliefIn(answers[label]), b) {
					p.step = "vote"
					p.calls = []toolCall{{req.nameOf("vote"), mustJSON(struct {
						AgentID string `json:"agent_id"`
						Reason  string `json:"reason"`
					}{label, "simulated vote: " + label + " says what I believe"})}}
					return p
				}
			}
			if !req.offers("new_answer") {
				return nil
			}
		}
		p.step = "answer"
		p.calls = []toolCall{{req.nameOf("new_answer"), mustJSON(struct {
			Content string `json:"content"`
		}{qualityAnswer(req.model, b)})}}
	case "text":
		p.step = "text"
		// The presenter restates the winning answer's belief (the prompt
		// may quote the answer escaped), else its own.
		if a := findAnswer(task); a != "" {
			b = strings.TrimSpace(beliefIn(a))
		}
		p.text = qualityAnswer(req.model, b)
	default:
		return nil
	}
	return p
}

// qualityAnswer is how a model words its belief: its own first line, so
// that two models' answers are never identical (a team's novelty check
// would reject the second as a duplicate, as it would a real model's), then
// the belief after "ANSWER:" on the last line, where scorers look for it.
func qualityAnswer(model, belief string) string {
	return "[sim model " + model + "] My answer, after working it through.\nANSWER: " + belief
}

// beliefIn is the belief an answer states: after its last "ANSWER:", else
// the whole answer.
func beliefIn(answer string) string {
	if i := strings.LastIndex(answer, "ANSWER:"); i >= 0 {
		return answer[i+len("ANSWER:"):]
	}
	return answer
}

func sameAnswer(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// parseAnswers reads the `<agentN> … <end of agentN>` blocks of a prompt.
func parseAnswers(msg string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(msg); {
		j := strings.Index(msg[i:], "<agent")
		if j < 0 {
			break
		}
		start := i + j
		gt := strings.IndexByte(msg[start:], '>')
		if gt < 0 {
			break
		}
		label := msg[start+1 : start+gt]
		body := msg[start+gt+1:]
		end := "<end of " + label + ">"
		if k := strings.Index(body, end); k >= 0 && !strings.ContainsAny(label, " \n") {
			out[label] = strings.TrimSpace(body[:k])
			i = start + gt + 1 + k + len(end)
			continue
		}
		i = start + gt + 1
	}
	return out
}
