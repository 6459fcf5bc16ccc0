package eval

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/massgen/massgen/internal/eval/dataset"
)

// Score is a scorer's verdict on one answer.
type Score struct {
	Value       float64 `json:"value"`               // 0 wrong … 1 right (judges may give 0.5)
	Extracted   string  `json:"extracted,omitempty"` // the part of the answer that was compared
	Explanation string  `json:"explanation,omitempty"`
}

// Scorer judges an answer to an item.
type Scorer interface {
	// Name is how the scorer is named on the command line and in results.
	Name() string
	Score(ctx context.Context, it dataset.Item, answer string) (Score, error)
}

// Closer is a scorer holding a resource (a Python runner).
type Closer interface{ Close() }

// ParseScorer reads a scorer spec: exact, match, numeric[:TOL] (absolute,
// or relative with %), choice, regex[:PATTERN], auto (choice for items
// with choices, numeric for a target that is a number, match otherwise). judge and python are built by their own
// constructors (NewJudge, NewPython) from their flags.
func ParseScorer(spec string) (Scorer, error) {
	name, arg, hasArg := strings.Cut(spec, ":")
	switch name {
	case "exact", "match", "choice", "auto":
		if hasArg {
			return nil, fmt.Errorf("scorer %s takes no argument", name)
		}
		return simpleScorer(name), nil
	case "numeric":
		n := numeric{tol: 1e-9}
		if hasArg {
			t := strings.TrimSpace(arg)
			if rel, ok := strings.CutSuffix(t, "%"); ok {
				n.relative = true
				t = rel
			}
			v, err := strconv.ParseFloat(t, 64)
			if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("scorer numeric:%s: the tolerance must be a number ≥ 0, or a percentage like 1%%", arg)
			}
			if n.relative {
				v /= 100
			}
			n.tol, n.spec = v, arg
		}
		return n, nil
	case "regex":
		r := regex{}
		if hasArg {
			re, err := regexp.Compile(arg)
			if err != nil {
				return nil, fmt.Errorf("scorer regex: %v", err)
			}
			r.re = re
		}
		return r, nil
	}
	return nil, fmt.Errorf("unknown scorer %q: want exact, match, numeric[:TOL], choice, regex[:PATTERN], auto, judge or python:FILE:FUNCTION", spec)
}

type simpleScorer string

func (s simpleScorer) Name() string { return string(s) }

func (s simpleScorer) Score(_ context.Context, it dataset.Item, answer string) (Score, error) {
	switch s {
	case "exact":
		a := strings.TrimSpace(answer)
		for _, t := range it.Target {
			if a == strings.TrimSpace(t) {
				return Score{Value: 1, Extracted: a}, nil
			}
		}
		return Score{Extracted: a}, nil
	case "choice":
		return scoreChoice(it, answer), nil
	case "auto":
		if len(it.Choices) > 0 {
			return scoreChoice(it, answer), nil
		}
		if _, _, ok := lastNumber(it.Target[0]); ok && number().FindString(it.Target[0]) == strings.TrimSpace(it.Target[0]) {
			return numeric{tol: 1e-9}.Score(context.Background(), it, answer)
		}
	}
	return scoreMatch(it, answer), nil
}

// answerMarker finds MassGen's and inspect-ai's "ANSWER: …" convention.
var answerMarker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?im)^\W*(?:final\s+)?answer\s*[:：]\s*(.+)$`) })

// candidates are the parts of an answer that may hold the answer proper:
// the text after the last "ANSWER:" marker, the last non-empty line, the
// whole answer.
func candidates(answer string) []string {
	var out []string
	if m := answerMarker().FindAllStringSubmatch(answer, -1); len(m) > 0 {
		out = append(out, m[len(m)-1][1])
	}
	lines := strings.Split(strings.TrimSpace(answer), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		out = append(out, last)
	}
	return append(out, answer)
}

// Normalise is the normalised-match form of a text: lower case,
// punctuation and the articles a, an, the removed, white space collapsed
// (SQuAD's normalisation).
func Normalise(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return ' '
		}
		return r
	}, s)
	var words []string
	for _, w := range strings.Fields(s) {
		if w != "a" && w != "an" && w != "the" {
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

func scoreMatch(it dataset.Item, answer string) Score {
	cs := candidates(answer)
	for _, c := range cs {
		nc := Normalise(c)
		for _, t := range it.Target {
			if nc != "" && nc == Normalise(t) {
				return Score{Value: 1, Extracted: strings.TrimSpace(c)}
			}
		}
	}
	return Score{Extracted: strings.TrimSpace(cs[0])}
}

// choiceLetter reads the letter a multiple-choice answer picks: "ANSWER: B",
// "(B)", "B)", "B." or "B" alone, or the text of a choice.
var choiceLetter = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\W*(?:answer\s*(?:is)?\s*[:：]?\s*)?\(?([A-Z])\)?(?:[.):\s]|$)`)
})

func scoreChoice(it dataset.Item, answer string) Score {
	for _, c := range candidates(answer) {
		c = strings.TrimSpace(c)
		letter := ""
		if m := choiceLetter().FindStringSubmatch(c); m != nil {
			if k := dataset.ChoiceIndex(it.Choices, m[1]); k >= 0 {
				letter = dataset.Letter(k)
			}
		}
		if letter == "" {
			if k := dataset.ChoiceIndex(it.Choices, c); k >= 0 {
				letter = dataset.Letter(k)
			}
		}
		if letter == "" {
			continue
		}
		for _, t := range it.Target {
			if strings.EqualFold(t, letter) {
				return Score{Value: 1, Extracted: letter}
			}
		}
		return Score{Extracted: letter}
	}
	return Score{Explanation: "no choice found in the answer"}
}

type numeric struct {
	tol      float64
	relative bool
	spec     string
}

func (n numeric) Name() string {
	if n.spec == "" {
		return "numeric"
	}
	return "numeric:" + n.spec
}

var number = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+`)
})

// lastNumber is the last number in s (thousands separators allowed).
func lastNumber(s string) (float64, string, bool) {
	m := number().FindAllString(s, -1)
	if len(m) == 0 {
		return 0, "", false
	}
	text := m[len(m)-1]
	v, err := strconv.ParseFloat(strings.ReplaceAll(text, ",", ""), 64)
	return v, text, err == nil
}

func (n numeric) Score(_ context.Context, it dataset.Item, answer string) (Score, error) {
	cs := candidates(answer)
	var got float64
	var text string
	found := false
	for _, c := range cs {
		if got, text, found = lastNumber(c); found {
			break
		}
	}
	if !found {
		return Score{Explanation: "no number in the answer"}, nil
	}
	for _, t := range it.Target {
		want, _, ok := lastNumber(t)
		if !ok {
			return Score{}, fmt.Errorf("item %s: target %q is not a number", it.ID, t)
		}
		tol := n.tol
		if n.relative {
			tol = n.tol * math.Abs(want)
		}
		if math.Abs(got-want) <= tol {
			return Score{Value: 1, Extracted: text}, nil
		}
	}
	return Score{Extracted: text}, nil
}

type regex struct{ re *regexp.Regexp }

func (r regex) Name() string {
	if r.re == nil {
		return "regex"
	}
	return "regex:" + r.re.String()
}

// Score: without a pattern each target is a pattern the answer must match;
// with one, the pattern's first group (or whole match) in the answer is
// the answer, compared with the targets normalised.
func (r regex) Score(_ context.Context, it dataset.Item, answer string) (Score, error) {
	if r.re == nil {
		for _, t := range it.Target {
			re, err := regexp.Compile(t)
			if err != nil {
				return Score{}, fmt.Errorf("item %s: target %q is not a regular expression: %v", it.ID, t, err)
			}
			if m := re.FindString(answer); m != "" || re.MatchString(answer) {
				return Score{Value: 1, Extracted: m}, nil
			}
		}
		return Score{}, nil
	}
	m := r.re.FindStringSubmatch(answer)
	if m == nil {
		return Score{Explanation: "the pattern does not match the answer"}, nil
	}
	got := m[0]
	if len(m) > 1 {
		got = m[1]
	}
	for _, t := range it.Target {
		if Normalise(got) == Normalise(t) {
			return Score{Value: 1, Extracted: got}, nil
		}
	}
	return Score{Extracted: got}, nil
}
