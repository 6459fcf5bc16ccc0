package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// criteriaTimeout bounds the criteria generation (upstream's pre-collab
// run has 300 s), and never more than the run's own timeout.
const criteriaTimeout = 300 * time.Second

// generateCriteria has evaluation criteria written for the question
// before the run starts (evaluation_criteria_generator): the first agent
// answers one plain call asking for them as JSON. The criteria go to the
// machine as an input (coord.CriteriaSet), so the run's log replays with
// them. When the call fails, or its criteria are too few, too many or
// unreadable, the checklist keeps its criteria (the generic ones, or
// checklist_criteria_inline), as upstream falls back, and says so in
// returned note.
func (r *runner) generateCriteria(ctx context.Context) (crit []coord.Criterion, note string) {
	ck := r.o.Checklist
	if ck == nil || !ck.Generate || len(r.o.Agents) == 0 {
		return nil, ""
	}
	lo, hi := ck.CriteriaBounds()
	done := r.preRunCall(ctx, criteriaSystem, criteriaPrompt(r.question, lo, hi), "writing the evaluation criteria (evaluation_criteria_generator)")
	if done.Failure != nil {
		return nil, fmt.Sprintf("the criteria generation failed (%s): using the fallback criteria", done.Failure.Message)
	}
	crit, err := ParseCriteria(done.Text, lo, hi)
	if err != nil {
		return nil, fmt.Sprintf("the generated criteria were not usable (%v): using the fallback criteria", err)
	}
	return crit, ""
}

// preRunCall is one plain call of the first agent before the run starts
// (criteria, personas): published as a turn of its own, its tokens and
// cost counted to that agent, bounded by criteriaTimeout and the run's own.
func (r *runner) preRunCall(ctx context.Context, system, user, reason string) agent.Done {
	a := &r.o.Agents[0]
	ctx, cancel := context.WithTimeout(ctx, min(criteriaTimeout, r.o.Timeout))
	defer cancel()
	task := agent.Task{Kind: agent.TaskDirect, Question: r.question, System: system, User: user}
	h := event.Header{Attempt: 1}
	r.publish(event.TurnStarted{Agent: a.ID, Prompt: user, Reason: reason})
	inbox := agent.NewInbox()
	done := r.follow(r.impl(a).Run(ctx, task, inbox), inbox, a.ID, h, false, nil)
	cost := r.addUsage(a.ID, done.Usage, done.CostUSD)
	r.o.Events.Publish(event.TurnEnded{Header: h, Agent: a.ID,
		Usage: event.Usage{InputTokens: done.Usage.InputTokens, OutputTokens: done.Usage.OutputTokens, CostUSD: cost}})
	return done
}

const criteriaSystem = "You write evaluation criteria that a team of AI agents will use to score their answers to a question before deciding to vote or to improve them. Reply with JSON only."

func criteriaPrompt(question string, lo, hi int) string {
	return fmt.Sprintf(`Write the evaluation criteria for answers to this question:

<question>
%s
</question>

Aim high: first decide what an excellent answer would achieve (the aspiration). Then write %d to %d opinionated, checkable criteria. Exactly one is "primary" (the one that matters most); the others are "standard" (must be met) or "stretch" (nice to have). For each, name the anti-patterns that fail it and what scores of 3, 5, 7 and 9 out of 10 look like.

Reply with one JSON object and nothing else:
{"aspiration": "...", "criteria": [{"text": "...", "category": "primary|standard|stretch", "anti_patterns": ["..."], "score_anchors": {"3": "...", "5": "...", "7": "...", "9": "..."}}]}`, question, lo, hi)
}

var fenced = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)```(?:json)?\\s*(\\{.*?\\})\\s*```") })

// ParseCriteria reads generated criteria from a model's reply: the JSON
// object itself, a fenced block, or the object that starts at
// {"criteria". It takes between lo and hi criteria with a text; more than
// one primary criterion is demoted to standard after the first.
func ParseCriteria(text string, lo, hi int) ([]coord.Criterion, error) {
	var doc struct {
		Criteria []struct {
			Text     string `json:"text"`
			Category string `json:"category"`
		} `json:"criteria"`
	}
	candidates := []string{strings.TrimSpace(text)}
	if m := fenced().FindStringSubmatch(text); m != nil {
		candidates = append(candidates, m[1])
	}
	if i := strings.Index(text, `{"criteria"`); i >= 0 {
		candidates = append(candidates, text[i:])
	}
	var err error
	for _, c := range candidates {
		dec := json.NewDecoder(strings.NewReader(c))
		if err = dec.Decode(&doc); err == nil && len(doc.Criteria) > 0 {
			break
		}
	}
	if len(doc.Criteria) == 0 {
		return nil, fmt.Errorf("no criteria found in the reply")
	}
	var out []coord.Criterion
	primary := false
	for _, c := range doc.Criteria {
		if strings.TrimSpace(c.Text) == "" {
			continue
		}
		cat := coord.NormalCategory(c.Category)
		if cat == coord.CatPrimary {
			if primary {
				cat = coord.CatStandard
			}
			primary = true
		}
		out = append(out, coord.Criterion{Text: strings.TrimSpace(c.Text), Category: cat})
	}
	if len(out) < lo || len(out) > hi {
		return nil, fmt.Errorf("%d criteria, want %d to %d", len(out), lo, hi)
	}
	return out, nil
}
