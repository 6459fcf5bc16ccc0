package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/eval/dataset"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/custom"
)

// Python is a scorer written as a Python function, run by the custom-tool
// runner (internal/tool/custom) the way a config's custom tools are: one
// long-lived process, the function loaded from its file, called with JSON
// keyword arguments question, target (a list), answer, choices and
// metadata. It returns a number (the score), a bool, or a dict with value
// (or score) and optionally answer and explanation.
type Python struct {
	name string
	py   *custom.Python
	tool tool.Tool
}

// NewPython loads FUNCTION from FILE (spec "FILE:FUNCTION") into a runner
// of the Python getenv picks (MASSGEN_PYTHON, python3, python).
func NewPython(ctx context.Context, spec string, getenv func(string) string) (*Python, error) {
	i := strings.LastIndex(spec, ":")
	if i <= 0 || i == len(spec)-1 {
		return nil, fmt.Errorf("scorer python:%s: want python:FILE:FUNCTION", spec)
	}
	file, fn := spec[:i], spec[i+1:]
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	exe, err := custom.FindPython(getenv)
	if err != nil {
		return nil, fmt.Errorf("scorer python: %w", err)
	}
	py := custom.NewPython(exe, filepath.Dir(abs))
	tools, errs, err := py.Load(ctx, []custom.PythonSpec{{Name: "score", File: abs, Function: fn, Timeout: 2 * time.Minute}})
	if err == nil {
		err = errors.Join(errs...)
	}
	if err != nil {
		py.Close()
		return nil, fmt.Errorf("scorer python:%s: %w", spec, err)
	}
	return &Python{name: "python:" + spec, py: py, tool: tools[0]}, nil
}

func (p *Python) Name() string { return p.name }
func (p *Python) Close()       { p.py.Close() }

func (p *Python) Score(ctx context.Context, it dataset.Item, answer string) (Score, error) {
	args, err := json.Marshal(map[string]any{"question": it.Question, "target": it.Target, "answer": answer,
		"choices": it.Choices, "metadata": it.Metadata})
	if err != nil {
		return Score{}, err
	}
	r := p.tool.Call(ctx, args)
	if r.IsError {
		return Score{}, errors.New(r.Content)
	}
	return parsePythonScore(r.Content)
}

// parsePythonScore reads what the function returned, as the runner
// rendered it: a number, true/false, or a JSON object.
func parsePythonScore(text string) (Score, error) {
	t := strings.TrimSpace(text)
	switch strings.ToLower(t) {
	case "true":
		return Score{Value: 1}, nil
	case "false":
		return Score{Value: 0}, nil
	}
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		return checkValue(Score{Value: v})
	}
	var obj struct {
		Value       *float64 `json:"value"`
		Score       *float64 `json:"score"`
		Answer      string   `json:"answer"`
		Explanation string   `json:"explanation"`
	}
	if err := json.Unmarshal([]byte(t), &obj); err != nil {
		return Score{}, fmt.Errorf("the scorer returned %q: want a number, a bool or a dict with value", preview(t))
	}
	v := obj.Value
	if v == nil {
		v = obj.Score
	}
	if v == nil {
		return Score{}, fmt.Errorf("the scorer returned %q: its dict has no value", preview(t))
	}
	return checkValue(Score{Value: *v, Extracted: obj.Answer, Explanation: obj.Explanation})
}

func checkValue(s Score) (Score, error) {
	if s.Value < 0 || s.Value > 1 || s.Value != s.Value {
		return Score{}, fmt.Errorf("the scorer returned %v: a score is between 0 and 1", s.Value)
	}
	return s, nil
}

func preview(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
