package coord

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Checklist-gated voting (upstream MassGen v0.1.73's voting_sensitivity:
// checklist_gated). Before an agent that has an answer may vote or give a
// new answer, it scores every current answer against the evaluation
// criteria with submit_checklist; the machine computes a hidden gate from
// voting_threshold and the agent's remaining answer budget, and its verdict
// decides: vote (the best answer is good enough) or new_answer (improve
// it). Upstream's gate is advice only — it never refuses a vote or an
// answer — and it requires every criterion to pass (a threshold on a 0–100
// scale divided into a 0–10 one). Here the verdict is enforced, and the
// gate is the documented one:
//
//   - core gate: every primary criterion passes (score ≥ cutoff);
//   - extended gate: at least `required` of the core criteria (primary and
//     standard) pass, required = max(⌈n/2⌉, n − ⌊10·et/30⌋);
//   - stretch criteria are reported but never block.
//
// et, the effective threshold, starts at voting_threshold (default 5),
// +2 when at most 2 answers remain, else +1 when at most 40 % remain, −1
// while at least 70 % remain, within 0..10; cutoff = max(4, ⌊10 − et/2⌋).
// A team running out of answer budget is thus held to a gentler bar.

// ToolChecklist is the checklist tool's name.
const ToolChecklist = "submit_checklist"

// DefaultThreshold is voting_threshold's default for the checklist gate.
const DefaultThreshold = 5

// Checklist configures checklist-gated voting (Settings.Checklist).
type Checklist struct {
	// Threshold is voting_threshold (0 means DefaultThreshold).
	Threshold int `json:",omitempty"`
	// Criteria are labelled E1…En in order; empty means DefaultCriteria.
	Criteria []Criterion `json:",omitempty"`
	// Agents are the gated agents (a per-agent voting_sensitivity);
	// empty means every agent.
	Agents []string `json:",omitempty"`
	// Generate asks for criteria written for the question before the run
	// starts (evaluation_criteria_generator): between MinCriteria and
	// MaxCriteria of them (0: 4 and 10, upstream's defaults for YAML).
	// The orchestrator has them written and feeds them as CriteriaSet.
	Generate                 bool `json:",omitempty"`
	MinCriteria, MaxCriteria int  `json:",omitempty"`
	// Report is the diagnostic report gate (checklist_require_gap_report;
	// checklist_report.go).
	Report bool `json:",omitempty"`
	// Improvements are draft_approach's impact floors (nil: upstream's
	// defaults, one structural or transformative improvement; draft.go).
	Improvements *Improvements `json:",omitempty"`
	// PerAgent are agents' own criteria, over Criteria (decomposition
	// mode's per-subtask criteria; CriteriaFor, decompose.go).
	PerAgent map[string][]Criterion `json:",omitempty"`
}

// CriteriaBounds are the generator's bounds with their defaults.
func (c *Checklist) CriteriaBounds() (lo, hi int) {
	lo, hi = 4, 10
	if c.MinCriteria > 0 {
		lo = c.MinCriteria
	}
	if c.MaxCriteria > 0 {
		hi = c.MaxCriteria
	}
	return lo, max(lo, hi)
}

// criteriaSet replaces the checklist's criteria before the run starts
// (generated ones); later, or without a checklist, it changes nothing.
func (m *Machine) criteriaSet(in CriteriaSet) []Command {
	if m.phase != phaseNew || m.cfg.Checklist == nil || len(in.Criteria) == 0 {
		return nil
	}
	if in.Agent != "" {
		return m.agentCriteriaSet(in)
	}
	ck := *m.cfg.Checklist
	ck.Criteria = in.Criteria
	m.cfg.Checklist = &ck
	return nil
}

// Criterion is one evaluation criterion.
type Criterion struct {
	Text     string
	Category string `json:",omitempty"` // primary | standard (the default) | stretch
}

// Criterion categories. Upstream's legacy words map onto them: must,
// core and should are standard; could is stretch.
const (
	CatPrimary  = "primary"
	CatStandard = "standard"
	CatStretch  = "stretch"
)

// NormalCategory maps a category as written to primary, standard or
// stretch.
func NormalCategory(c string) string {
	switch strings.ToLower(strings.TrimSpace(c)) {
	case CatPrimary:
		return CatPrimary
	case CatStretch, "could", "extended":
		return CatStretch
	}
	return CatStandard
}

// DefaultCriteria are upstream's generic fallback criteria.
var DefaultCriteria = []Criterion{
	{Text: "Requirements fidelity: the answer does everything the question asks, as asked, and nothing it forbids."},
	{Text: "Multi-level correctness: it is right structurally, in its content, and in how it works or reads in use."},
	{Text: "Per-part depth: judge the weakest part; every part is treated with real depth, none is a placeholder.", Category: CatPrimary},
	{Text: "Intentional craft: choices are deliberate and explained; the whole is polished rather than merely adequate."},
}

// CriteriaOf returns c's criteria, DefaultCriteria when none are set.
func (c *Checklist) CriteriaOf() []Criterion {
	if c == nil || len(c.Criteria) == 0 {
		return DefaultCriteria
	}
	return c.Criteria
}

// Gates reports whether agent id's votes are checklist-gated.
func (c *Checklist) Gates(id string) bool {
	return c != nil && (len(c.Agents) == 0 || slices.Contains(c.Agents, id))
}

// CriterionID is the label of criterion i (from 0): E1, E2, ….
func CriterionID(i int) string { return "E" + strconv.Itoa(i+1) }

// gate is an agent's last accepted checklist: the answer set it scored
// (epoch) and its verdict.
type gate struct {
	epoch     int
	terminate bool
	best      string
	fails     []string      // the failing criteria, for draft_approach
	items     []ItemScore   // the best answer's scores
	history   [][]ItemScore // the agent's earlier accepted checklists, oldest first (plateaus)
}

// ParseScores reads submit_checklist's scores argument: per answer label,
// per criterion id, a score 0–10 as a number or {"score": n, …}. A flat
// map of criterion ids is the scores of the only answer (label). The
// scores may come as a JSON string (some models send one).
func ParseScores(raw json.RawMessage, only string) (map[string]map[string]float64, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, fmt.Errorf("scores must be an object: {\"agent1\": {\"E1\": 8, …}, …}")
	}
	out := map[string]map[string]float64{}
	flat := map[string]float64{}
	for k, v := range top {
		if n, ok := score(v); ok {
			flat[k] = n
			continue
		}
		var per map[string]json.RawMessage
		if err := json.Unmarshal(v, &per); err != nil {
			return nil, fmt.Errorf("the scores of %q must be an object of criterion scores", k)
		}
		m := map[string]float64{}
		for e, sv := range per {
			n, ok := score(sv)
			if !ok {
				return nil, fmt.Errorf("score %s of %s must be a number from 0 to 10", e, k)
			}
			m[e] = n
		}
		out[k] = m
	}
	if len(flat) > 0 {
		if len(out) > 0 || only == "" {
			return nil, fmt.Errorf("flat scores are only allowed when there is one answer: score each answer by its label, {\"agent1\": {\"E1\": 8, …}, …}")
		}
		out[only] = flat
	}
	return out, nil
}

// score reads a number, or an object with a numeric "score".
func score(v json.RawMessage) (float64, bool) {
	var n float64
	if json.Unmarshal(v, &n) == nil {
		return n, n >= 0 && n <= 10
	}
	var o struct{ Score *float64 }
	if json.Unmarshal(v, &o) == nil && o.Score != nil {
		return *o.Score, *o.Score >= 0 && *o.Score <= 10
	}
	return 0, false
}

// gateBar is the hidden gate for a's next decision: the effective
// threshold, the cutoff score and how many core criteria must pass.
func (m *Machine) gateBar(a *agent, core int) (et, cutoff, required int) {
	total := 5
	if m.cfg.MaxAnswers > 0 {
		total = m.cfg.MaxAnswers
	}
	remaining := max(total-len(a.answers), 0)
	et = m.cfg.Checklist.Threshold
	if et == 0 {
		et = DefaultThreshold
	}
	ratio := float64(remaining) / float64(total)
	switch {
	case remaining <= 2:
		et += 2
	case ratio <= 0.4:
		et++
	}
	if ratio >= 0.7 {
		et--
	}
	et = min(max(et, 0), 10)
	cutoff = max(4, int(10-0.5*float64(et)))
	required = max(int(math.Ceil(float64(core)/2)), core-(10*et)/30)
	return et, cutoff, required
}

// checklist judges a submit_checklist call of a's turn: its scores of the
// current answers give the verdict, kept as a's gate for this answer set.
// A refused submission's message carries upstream's error_code.
func (m *Machine) checklist(a *agent, seen int, act Action) Verdict {
	reject := func(format string, args ...any) Verdict {
		return Verdict{Outcome: Rejected, Message: fmt.Sprintf(format, args...)}
	}
	if !m.cfg.Checklist.Gates(a.id) {
		return reject("submit_checklist is not available: your votes are not checklist-gated.")
	}
	if len(a.answers) == 0 {
		return reject("submit_checklist is not available before your first answer: give your own answer with new_answer.")
	}
	if seen != m.epoch {
		return Verdict{Outcome: Rejected, Message: "The answers changed while you scored them: score the current answers (shown in the update) and call submit_checklist again."}
	}
	if g := a.gate; g != nil && g.epoch == m.epoch {
		return reject("You already scored these answers; act on that verdict: %s.", verdictWord(g))
	}
	answers := m.Answers()
	if m.decomposition() {
		answers = m.ownWork(a) // one's own subtask's work, flat scores (decompose.go)
	}
	crit := m.cfg.Checklist.CriteriaFor(a.id)
	core := 0
	for _, c := range crit {
		if NormalCategory(c.Category) != CatStretch {
			core++
		}
	}
	_, cutoff, required := m.gateBar(a, core)
	rep := m.evalReport(act.Report)
	only := ""
	if len(answers) == 1 {
		only = answers[0].Label
	}
	scores, err := ParseScores(json.RawMessage(act.Content), only)
	if err != nil {
		code := ErrScoresInvalid
		if strings.Contains(err.Error(), "only allowed when there is one answer") {
			code = ErrFlatDisallowed
		}
		return invalid(code, required, rep, "%v", err)
	}
	flat := flatScores(act.Content)
	for label, per := range scores {
		i := strings.LastIndex(label, ".") // "agent1.2" names agent1's answer too
		if i > 0 && !slices.ContainsFunc(answers, func(x Answer) bool { return x.Label == label }) {
			delete(scores, label)
			scores[label[:i]] = per
		}
		for k, v := range per { // legacy T1… keys
			if strings.HasPrefix(k, "T") {
				per["E"+k[1:]] = v
			}
		}
	}
	var incomplete []string
	for _, ans := range answers {
		per, ok := scores[ans.Label]
		if !ok {
			continue
		}
		var missing []string
		for i := range crit {
			if _, ok := per[CriterionID(i)]; !ok {
				missing = append(missing, CriterionID(i))
			}
		}
		if len(missing) > 0 {
			incomplete = append(incomplete, fmt.Sprintf("%s: missing %s", ans.Label, strings.Join(missing, ", ")))
		}
	}
	if len(incomplete) > 0 {
		if flat {
			return invalid(ErrMissingCriteria, required, rep, "Incomplete submission: %s. You must score ALL %d criteria (E1-E%d). Resubmit with scores for every criterion.",
				strings.Join(incomplete, "; "), len(crit), len(crit))
		}
		return invalid(ErrIncompleteAgent, required, rep, "Incomplete per-agent submission: %s. You must score ALL %d criteria for EVERY agent. Resubmit with complete scores.",
			strings.Join(incomplete, "; "), len(crit))
	}
	var unscored []string
	for _, ans := range answers {
		if _, ok := scores[ans.Label]; !ok {
			unscored = append(unscored, ans.Label)
		}
	}
	if len(unscored) > 0 {
		return invalid(ErrMissingAgentScores, required, rep, "Missing scores for available agents: %s. You must score ALL agents you have context for: %s. Resubmit with per-agent scores covering every agent.",
			strings.Join(unscored, ", "), labelList(answers))
	}
	best, bestSum := "", -1.0
	perAgent := map[string]map[string]float64{}
	for _, ans := range answers {
		sum := 0.0
		perAgent[ans.Label] = map[string]float64{}
		for i := range crit {
			s := scores[ans.Label][CriterionID(i)]
			sum += s
			perAgent[ans.Label][CriterionID(i)] = s
		}
		if sum > bestSum {
			best, bestSum = ans.Label, sum
		}
	}
	passed, trueCount, primaryOK := 0, 0, true
	var fails, lines []string
	items := make([]ItemScore, len(crit))
	for i, c := range crit {
		id, s := CriterionID(i), scores[best][CriterionID(i)]
		ok := s >= float64(cutoff)
		items[i] = ItemScore{ID: id, Score: s, Passed: ok}
		cat := NormalCategory(c.Category)
		mark := "passed"
		if !ok {
			mark = "not passed"
			fails = append(fails, id)
		} else {
			trueCount++
		}
		lines = append(lines, fmt.Sprintf("%s %g/10 %s (%s)", id, s, mark, cat))
		switch {
		case cat == CatStretch:
		case ok:
			passed++
		case cat == CatPrimary:
			primaryOK = false
		}
	}
	if rep != nil && !rep.Passed {
		return invalid(ErrReportInvalid, required, rep, "Diagnostic report validation failed. %s Fix the report and resubmit submit_checklist.", strings.Join(rep.Issues, "; "))
	}
	var history [][]ItemScore
	if a.gate != nil {
		history = append(a.gate.history, a.gate.items)
	}
	g := &gate{epoch: m.epoch, terminate: primaryOK && passed >= required, best: best, fails: fails, items: items, history: history}
	a.gate, a.checked = g, true
	res := checklistResult{Status: "accepted", Verdict: ToolVote, TrueCount: trueCount, Required: required, Items: items,
		FailedCriteria: fails, Report: rep, BestAgent: best, PerAgentScores: perAgent}
	res.Explanation = fmt.Sprintf("%d of %d items passed (required: %d core). Verdict: %s.", trueCount, len(crit), required, ToolVote)
	next := fmt.Sprintf("Next: call vote for %s.", best)
	if !g.terminate {
		res.Verdict = ToolNewAnswer
		res.PlateauedCriteria = plateaued(items, history, crit)
		res.Explanation = fmt.Sprintf("%d of %d items passed (required: %d core). Verdict: %s. Items that need improvement: %s. %s"+
			"NEXT STEP: Call `draft_approach` to plan what to build for each failing criterion. This is required before implementing. "+
			"Then implement your plan and call `new_answer`.",
			trueCount, len(crit), required, ToolNewAnswer, strings.Join(fails, ", "), plateauLine(res.PlateauedCriteria))
		next = fmt.Sprintf("Next: call draft_approach with a plan for each failing criterion (%s), then new_answer with an answer that fixes them — do not vote now.", strings.Join(fails, ", "))
	}
	if rep != nil && rep.Provided {
		res.Explanation += " Diagnostic report provided."
	}
	return Verdict{Outcome: Accepted, Label: best, Message: res.message(fmt.Sprintf(
		"Checklist accepted. Verdict: %s. Best answer: %s. %s; %d of %d core criteria passed (%d needed). %s",
		verdictWord(g), best, strings.Join(lines, "; "), passed, core, required, next))}
}

// flatScores reports whether scores were given flat ({"E1": 8, …}), as one
// answer's, rather than per answer label.
func flatScores(raw string) bool {
	var s string
	if json.Unmarshal([]byte(raw), &s) == nil {
		raw = s
	}
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &top) != nil {
		return false
	}
	for k := range top {
		if strings.HasPrefix(k, "E") || strings.HasPrefix(k, "T") {
			return true
		}
	}
	return false
}

func verdictWord(g *gate) string {
	if g.terminate {
		return "vote for " + g.best
	}
	return "iterate (new_answer)"
}

// gated says why the gate refuses a's action now, or "". An agent that
// cannot give a new answer (its answer cap, the fairness lead cap) may
// always vote: the gate chooses between the two, it never leaves none.
func (m *Machine) gated(a *agent, kind ActionKind) string {
	if !m.cfg.Checklist.Gates(a.id) {
		return ""
	}
	if kind == ActVote && len(a.answers) == 0 {
		return "Checklist-gated voting: give your own first answer with new_answer before you vote."
	}
	if len(a.answers) == 0 {
		return ""
	}
	if kind == ActVote && (m.cfg.MaxAnswers > 0 && len(a.answers) >= m.cfg.MaxAnswers || m.leadCapped(a) != "" || m.globalCapped() != "") {
		return ""
	}
	g := a.gate
	switch {
	case g == nil || g.epoch != m.epoch:
		return "Checklist-gated voting: first score every current answer on every criterion with submit_checklist, then act on its verdict."
	case kind == ActVote && !g.terminate:
		return "Checklist-gated voting: the checklist's verdict on these answers is to iterate; call new_answer with an improved answer, not vote."
	case kind == ActNewAnswer && g.terminate:
		return fmt.Sprintf("Checklist-gated voting: the checklist's verdict on these answers is to vote (for %s); call vote, not new_answer.", g.best)
	}
	return ""
}
