package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/eval/dataset"
	"github.com/massgen/massgen/internal/orchestrator"
)

// DefaultJudgePrompt is the model-graded judge's prompt (inspect-ai's
// model_graded_qa, in substance). {question}, {target}, {answer} and
// {choices} are filled in; --judge-prompt replaces it.
const DefaultJudgePrompt = `You are comparing a submitted answer to an expert answer on a given question.

[BEGIN DATA]
************
[Question]: {question}
************
[Expert]: {target}
************
[Submission]: {answer}
************
[END DATA]

Compare the factual content of the submitted answer with the expert answer. Ignore any differences in style, grammar, or punctuation.
Does the submission contain the content in the expert answer?

After assessing the submitted answer, reply with 'GRADE: $LETTER' (without quotes) where LETTER is one of CPI: C for correct, P for partially correct, I for incorrect. First explain your reasoning step by step, then end with the grade on a line of its own.`

// Judge is the model-graded scorer: a configured model reads the
// question, the target and the answer and grades it C (1), P (0.5) or I
// (0). The model is any massgen can run: an agent of a config (Config and
// Agent; the first agent when Agent is empty) or a model name (Model),
// asked through app as a one-agent run with one answer and no
// presentation.
type Judge struct {
	Env    *app.Env
	Config string
	Agent  string
	Model  string
	Prompt string // "" = DefaultJudgePrompt

	once   sync.Once
	stderr io.Writer // Env.Stderr, each distinct line once
}

// Name is judge:model=NAME or judge:config=PATH[#AGENT].
func (j *Judge) Name() string {
	if j.Model != "" {
		return "judge:model=" + j.Model
	}
	if j.Agent != "" {
		return "judge:config=" + j.Config + "#" + j.Agent
	}
	return "judge:config=" + j.Config
}

var grade = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)GRADE\s*:\s*\**\s*([CPI])\b`) })

// JudgePrompt fills a judge prompt template in.
func JudgePrompt(template string, it dataset.Item, answer string) string {
	if template == "" {
		template = DefaultJudgePrompt
	}
	var choices strings.Builder
	for i, c := range it.Choices {
		fmt.Fprintf(&choices, "%s) %s\n", dataset.Letter(i), c)
	}
	return strings.NewReplacer("{question}", it.Question, "{target}", strings.Join(it.Target, " | "),
		"{answer}", answer, "{choices}", strings.TrimSpace(choices.String())).Replace(template)
}

func (j *Judge) Score(ctx context.Context, it dataset.Item, answer string) (Score, error) {
	rq := app.Request{
		Question: JudgePrompt(j.Prompt, it, answer),
		Team: app.Team{
			Config: j.Config,
			Model:  j.Model,
		},
		Overrides: app.Overrides{Quick: true},
		Logging:   app.Logging{NoLogs: true},
	}
	if j.Config != "" {
		rq.SingleAgent = j.Agent
		if rq.SingleAgent == "" {
			rq.SingleAgent = app.FirstAgent
		}
	}
	// Every grading run would print the judge config's warnings again.
	j.once.Do(func() { j.stderr = &onceWriter{w: cmpWriter(j.Env.Stderr), seen: map[string]bool{}} })
	env := *j.Env
	env.Stderr = j.stderr
	out, err := app.Execute(ctx, &env, rq)
	if err != nil {
		return Score{}, fmt.Errorf("judge: %w", err)
	}
	if out.Status != orchestrator.Completed || out.Final == "" {
		return Score{}, fmt.Errorf("judge: the run ended %s: %v", out.Status, cmpErr(out.Err))
	}
	m := grade().FindAllStringSubmatch(out.Final, -1)
	if len(m) == 0 {
		return Score{Explanation: lastLine(out.Final)}, errors.New("judge: the reply has no GRADE: C, P or I")
	}
	s := Score{Explanation: lastLine(out.Final), Extracted: strings.ToUpper(m[len(m)-1][1])}
	switch s.Extracted {
	case "C":
		s.Value = 1
	case "P":
		s.Value = 0.5
	}
	return s, nil
}

func cmpErr(err error) error {
	if err == nil {
		return errors.New("no answer")
	}
	return err
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 500 {
		s = "…" + s[len(s)-500:]
	}
	return s
}

func cmpWriter(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
