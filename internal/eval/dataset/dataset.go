// Package dataset reads the items of an evaluation: JSON lines or CSV, each
// item a question, its target (one accepted answer or several), optional
// multiple-choice options and metadata. It is what `massgen eval` scores
// against, and what the simulator's quality scenarios read to know each
// item's right answer (internal/llmsim), so it imports only the standard
// library and nothing of massgen.
//
// JSON lines: one object per line, blank lines and lines starting with #
// skipped.
//
//	{"id": "q1", "question": "What is 6 × 7?", "target": "42"}
//	{"question": "Capital of France?", "target": ["Paris", "paris, france"]}
//	{"input": "Which is a prime?", "choices": ["4", "6", "7"], "target": "C", "metadata": {"topic": "maths"}}
//
// "input" is accepted for "question" and "answer" for "target" (inspect-ai
// and common dataset spellings). A target that is a number is kept as its
// JSON text. CSV: a header row names the columns; question (or input) and
// target (or answer) are required, id is optional, choices holds the
// options separated by "|", and every other column is metadata.
//
// Items without an id are numbered by their position (1, 2, …); ids must be
// unique. A multiple-choice target may be the letter of the choice (A, B,
// …) or the choice's text; Load turns the text into the letter.
package dataset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MaxItems bounds a dataset: an evaluation runs every item through a team,
// so a file with more is a mistake, not a workload.
const MaxItems = 100_000

// Item is one question of a dataset.
type Item struct {
	ID       string         `json:"id"`
	Question string         `json:"question"`
	Target   []string       `json:"target"` // accepted answers; the first is the canonical one
	Choices  []string       `json:"choices,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Letter is the label of choice i: A, B, …, Z, then 27, 28, ….
func Letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return strconv.Itoa(i + 1)
}

// Prompt is the question as the agents are asked it: with choices, the
// question, the lettered options and how to answer.
func (it Item) Prompt() string {
	if len(it.Choices) == 0 {
		return it.Question
	}
	var b strings.Builder
	b.WriteString(it.Question)
	b.WriteString("\n\n")
	for i, c := range it.Choices {
		fmt.Fprintf(&b, "%s) %s\n", Letter(i), c)
	}
	b.WriteString("\nAnswer with the letter of the correct choice.")
	return b.String()
}

// Dataset is a loaded file.
type Dataset struct {
	Path   string
	Items  []Item
	SHA256 string // of the file's bytes: a resumed evaluation checks it
}

// Load reads a dataset file: .csv as CSV, anything else as JSON lines.
func Load(path string) (*Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	var items []Item
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		items, err = parseCSV(path, data)
	} else {
		items, err = parseJSONL(path, data)
	}
	if err != nil {
		return nil, err
	}
	if err := finish(path, items); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &Dataset{Path: path, Items: items, SHA256: hex.EncodeToString(sum[:])}, nil
}

// Parse reads JSON lines (or CSV when csvFormat) from data; name is used in
// errors.
func Parse(name string, data []byte, csvFormat bool) ([]Item, error) {
	var items []Item
	var err error
	if csvFormat {
		items, err = parseCSV(name, data)
	} else {
		items, err = parseJSONL(name, data)
	}
	if err != nil {
		return nil, err
	}
	return items, finish(name, items)
}

type jsonItem struct {
	ID       json.RawMessage `json:"id"`
	Question *string         `json:"question"`
	Input    *string         `json:"input"`
	Target   json.RawMessage `json:"target"`
	Answer   json.RawMessage `json:"answer"`
	Choices  []string        `json:"choices"`
	Metadata map[string]any  `json:"metadata"`
}

func parseJSONL(name string, data []byte) ([]Item, error) {
	var items []Item
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		var j jsonItem
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			return nil, fmt.Errorf("%s:%d: %v (an item has question or input, target or answer, and optionally id, choices, metadata)", name, line, err)
		}
		it := Item{Choices: j.Choices, Metadata: j.Metadata}
		var err error
		if it.ID, err = idText(j.ID); err != nil {
			return nil, fmt.Errorf("%s:%d: id: %v", name, line, err)
		}
		switch {
		case j.Question != nil && j.Input != nil:
			return nil, fmt.Errorf("%s:%d: give question or input, not both", name, line)
		case j.Question != nil:
			it.Question = *j.Question
		case j.Input != nil:
			it.Question = *j.Input
		}
		raw := j.Target
		if len(raw) == 0 {
			raw = j.Answer
		} else if len(j.Answer) > 0 {
			return nil, fmt.Errorf("%s:%d: give target or answer, not both", name, line)
		}
		if it.Target, err = targets(raw); err != nil {
			return nil, fmt.Errorf("%s:%d: target: %v", name, line, err)
		}
		if err := check(&it); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		items = append(items, it)
		if len(items) > MaxItems {
			return nil, fmt.Errorf("%s: more than %d items", name, MaxItems)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	return items, nil
}

func idText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", errors.New("must be a string or a number")
	}
	return n.String(), nil
}

// targets reads a target: a string, a number (kept as its text) or a list
// of them.
func targets(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	one := func(r json.RawMessage) (string, error) {
		var s string
		if json.Unmarshal(r, &s) == nil {
			return s, nil
		}
		var n json.Number
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		if d.Decode(&n) == nil {
			return n.String(), nil
		}
		return "", errors.New("must be a string, a number or a list of them")
	}
	if raw[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		out := make([]string, 0, len(list))
		for _, r := range list {
			s, err := one(r)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := one(raw)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

func parseCSV(name string, data []byte) ([]Item, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the header row: %v", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("%s:1: column %q twice", name, h)
		}
		col[h] = i
	}
	pick := func(names ...string) int {
		for _, n := range names {
			if i, ok := col[n]; ok {
				return i
			}
		}
		return -1
	}
	qi, ti := pick("question", "input"), pick("target", "answer")
	if qi < 0 || ti < 0 {
		return nil, fmt.Errorf("%s:1: the header needs a question (or input) column and a target (or answer) column; it has %s", name, strings.Join(header, ", "))
	}
	ii, ci := pick("id"), pick("choices")
	var items []Item
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields for %d columns", name, line, len(rec), len(header))
		}
		it := Item{Question: rec[qi], Target: []string{rec[ti]}}
		if ii >= 0 {
			it.ID = strings.TrimSpace(rec[ii])
		}
		if ci >= 0 && strings.TrimSpace(rec[ci]) != "" {
			for c := range strings.SplitSeq(rec[ci], "|") {
				it.Choices = append(it.Choices, strings.TrimSpace(c))
			}
		}
		for i, h := range header {
			if i == qi || i == ti || i == ii || i == ci {
				continue
			}
			if it.Metadata == nil {
				it.Metadata = map[string]any{}
			}
			it.Metadata[strings.TrimSpace(h)] = rec[i]
		}
		if err := check(&it); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		items = append(items, it)
		if len(items) > MaxItems {
			return nil, fmt.Errorf("%s: more than %d items", name, MaxItems)
		}
	}
	return items, nil
}

// check validates an item and turns a multiple-choice target given as the
// choice's text into its letter.
func check(it *Item) error {
	if strings.TrimSpace(it.Question) == "" {
		return errors.New("the question is empty")
	}
	if len(it.Target) == 0 {
		return errors.New("the item has no target")
	}
	if len(it.Choices) == 1 {
		return errors.New("a multiple-choice item needs at least two choices")
	}
	for i, t := range it.Target {
		if len(it.Choices) == 0 {
			continue
		}
		if k := ChoiceIndex(it.Choices, t); k >= 0 {
			it.Target[i] = Letter(k)
			continue
		}
		return fmt.Errorf("target %q is neither a choice's letter (A-%s) nor one of the choices", t, Letter(len(it.Choices)-1))
	}
	return nil
}

// ChoiceIndex is the index of the choice t names, by letter ("B", "b",
// "(B)") or by its text (case and surrounding space ignored); -1 if none.
func ChoiceIndex(choices []string, t string) int {
	s := strings.TrimSpace(t)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	for i := range choices {
		if strings.EqualFold(s, Letter(i)) {
			return i
		}
	}
	for i, c := range choices {
		if strings.EqualFold(strings.TrimSpace(c), strings.TrimSpace(t)) {
			return i
		}
	}
	return -1
}

// finish numbers items without an id and checks ids are unique.
func finish(name string, items []Item) error {
	if len(items) == 0 {
		return fmt.Errorf("%s: no items", name)
	}
	seen := map[string]bool{}
	for i := range items {
		if items[i].ID == "" {
			items[i].ID = strconv.Itoa(i + 1)
		}
		if seen[items[i].ID] {
			return fmt.Errorf("%s: item id %q appears twice", name, items[i].ID)
		}
		seen[items[i].ID] = true
	}
	return nil
}

// Find is the item whose question the text asks: the one whose question
// (or prompt) appears in text, the longest such when several do. The
// simulator uses it to know which item a request is about.
func Find(items []Item, text string) (Item, bool) {
	best, n := -1, 0
	for i, it := range items {
		q := strings.TrimSpace(it.Question)
		if len(q) > n && strings.Contains(text, q) {
			best, n = i, len(q)
		}
	}
	if best < 0 {
		return Item{}, false
	}
	return items[best], true
}
