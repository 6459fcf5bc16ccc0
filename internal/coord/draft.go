package coord

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// draft_approach (upstream's evaluate_draft_approach): after a checklist
// whose verdict is iterate, the agent says what it will build for each
// failing criterion — a non-empty list of {plan, sources, impact} entries
// (or plain strings) per criterion id — what it must not lose (preserve:
// criterion id → {what, source}) and, optionally, a vision of the ideal
// answer. A valid draft becomes a task plan: the vision first, one task
// per improvement, one regression check last; the tool that made the call
// lays it in the agent's task plan when task planning is on. The machine
// judges the draft and returns the plan; it keeps nothing of it, and a
// new_answer does not require one (upstream's prompt asks for it, and its
// orchestrator does not enforce it either).

// ToolDraft is draft_approach's name.
const ToolDraft = "draft_approach"

// Improvements are draft_approach's floors on the impact of the planned
// improvements (orchestrator.coordination.improvements): at least
// Transformative transformative ones, Structural structural ones and
// NonIncremental of the two together.
type Improvements struct {
	Transformative, Structural, NonIncremental int `json:",omitempty"`
}

// Floors are the impact floors with upstream's defaults.
func (c *Checklist) Floors() Improvements {
	if c.Improvements == nil {
		return Improvements{NonIncremental: 1}
	}
	return *c.Improvements
}

// DraftTask is one task of a valid draft's plan (upstream's task_plan
// entries): type vision, improve or verify_preserve.
type DraftTask struct {
	Type        string         `json:"type"`
	Description string         `json:"description,omitempty"`  // vision, verify_preserve
	CriterionID string         `json:"criterion_id,omitempty"` // improve
	Criterion   string         `json:"criterion,omitempty"`
	Plan        string         `json:"plan,omitempty"`
	Sources     []string       `json:"sources,omitempty"`
	Impact      string         `json:"impact,omitempty"`
	Items       []PreserveItem `json:"items,omitempty"` // verify_preserve
	Priority    string         `json:"priority,omitempty"`
}

// PreserveItem is a strength the next answer must keep.
type PreserveItem struct {
	CriterionID string `json:"criterion_id"`
	What        string `json:"what"`
	Source      string `json:"source"`
}

// DraftResult is draft_approach's result payload.
type DraftResult struct {
	Valid    bool        `json:"valid"`
	Error    string      `json:"error,omitempty"`
	Missing  []string    `json:"missing_criteria,omitempty"`
	Empty    []string    `json:"empty_criteria,omitempty"`
	Failed   []string    `json:"failed_criteria,omitempty"`
	TaskPlan []DraftTask `json:"task_plan,omitempty"`
	Message  string      `json:"message,omitempty"`
	// Preserve is the normalised preserve map of a valid draft.
	Preserve map[string]PreserveItem `json:"preserve,omitempty"`
}

// JSON is the payload as the tool returns it.
func (r DraftResult) JSON() string {
	b, _ := json.Marshal(r)
	return string(b)
}

var impacts = []string{"transformative", "structural", "incremental"}

// draft judges a draft_approach call of a's turn against its checklist on
// the current answers.
func (m *Machine) draft(a *agent, seen int, act Action) Verdict {
	refuse := func(r DraftResult) Verdict {
		r.Valid = false
		return Verdict{Outcome: Rejected, Message: r.JSON()}
	}
	errf := func(format string, args ...any) Verdict {
		return refuse(DraftResult{Error: fmt.Sprintf(format, args...)})
	}
	if !m.cfg.Checklist.Gates(a.id) {
		return errf("draft_approach is not available: your votes are not checklist-gated.")
	}
	if seen != m.epoch {
		return errf("The answers changed since you scored them: score the current answers with submit_checklist first.")
	}
	g := a.gate
	switch {
	case g == nil || g.epoch != m.epoch:
		return errf("draft_approach is unavailable: call submit_checklist on the current answers first.")
	case g.terminate:
		return errf("draft_approach is only available after submit_checklist returns an iterate verdict (new_answer).")
	case len(g.fails) == 0:
		return errf("No failed criteria to improve")
	}
	var args struct {
		Plan         json.RawMessage `json:"plan"`
		Improvements json.RawMessage `json:"improvements"`
		Preserve     json.RawMessage `json:"preserve"`
		Vision       *string         `json:"vision"`
	}
	if err := json.Unmarshal([]byte(act.Content), &args); err != nil {
		return errf("draft_approach's arguments must be an object: {\"improvements\": {\"E1\": [{\"plan\": …, \"sources\": […]}]}, \"preserve\": {…}, \"vision\": \"…\"}")
	}
	raw := args.Plan // the SDK variant's name, with improvements as its fallback
	if isEmptyJSON(raw) {
		raw = args.Improvements
	}
	improvements, ok := objectOf(raw)
	if !ok {
		return errf("improvements must be a dict mapping criterion IDs to lists")
	}
	var missing, empty []string
	entries := map[string][]DraftTask{}
	for _, id := range g.fails {
		v, ok := improvements[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		list := improvementList(v)
		if len(list) == 0 {
			empty = append(empty, id)
			continue
		}
		entries[id] = list
	}
	if len(missing)+len(empty) > 0 {
		var issues []string
		if len(missing) > 0 {
			issues = append(issues, "Missing improvements for: "+strings.Join(missing, ", "))
		}
		if len(empty) > 0 {
			issues = append(issues, "Empty improvements for: "+strings.Join(empty, ", "))
		}
		return refuse(DraftResult{Error: strings.Join(issues, "; "), Missing: missing, Empty: empty, Failed: g.fails})
	}
	crit := m.cfg.Checklist.CriteriaFor(a.id)
	ids := make([]string, len(crit))
	for i := range crit {
		ids[i] = CriterionID(i)
	}
	preserve, _ := objectOf(args.Preserve)
	allFresh := true
	for _, id := range g.fails {
		for _, e := range entries[id] {
			if len(e.Sources) == 0 || slices.ContainsFunc(e.Sources, func(s string) bool {
				s = strings.ToLower(strings.TrimSpace(s))
				return s != "fresh" && s != "new"
			}) {
				allFresh = false
			}
		}
	}
	if len(preserve) == 0 && !allFresh {
		return errf("Preserve is required: specify what to protect from regression. Criteria available: %s", strings.Join(ids, ", "))
	}
	kept := map[string]PreserveItem{}
	for _, id := range sortedKeys(preserve) {
		if !slices.Contains(ids, id) {
			return errf("Preserve key %s is not a valid criterion ID. Valid: %s", id, strings.Join(ids, ", "))
		}
		p := preserveItem(id, preserve[id])
		if strings.TrimSpace(p.What) == "" {
			return errf("Preserve entry for %s has empty 'what' — describe what to protect.", id)
		}
		kept[id] = p
	}
	fl := m.cfg.Checklist.Floors()
	var tr, st int
	for _, id := range g.fails {
		for _, e := range entries[id] {
			switch e.Impact {
			case "transformative":
				tr++
			case "structural":
				st++
			}
		}
	}
	var short []string
	if tr < fl.Transformative {
		short = append(short, fmt.Sprintf("transformative: %d/%d", tr, fl.Transformative))
	}
	if st < fl.Structural {
		short = append(short, fmt.Sprintf("structural: %d/%d", st, fl.Structural))
	}
	if tr+st < fl.NonIncremental {
		short = append(short, fmt.Sprintf("non-incremental combined: %d/%d", tr+st, fl.NonIncremental))
	}
	if len(short) > 0 {
		return errf("Improvement impact requirements not met (%s). A round at this cost needs bolder changes: mark at least the improvements "+
			"that change the answer's structure as impact \"structural\" (or \"transformative\"), or propose bolder ones.", strings.Join(short, ", "))
	}
	var plan []DraftTask
	if args.Vision != nil && strings.TrimSpace(*args.Vision) != "" {
		plan = append(plan, DraftTask{Type: "vision", Description: strings.TrimSpace(*args.Vision), Priority: "high"})
	}
	for _, id := range g.fails {
		text := crit[slices.Index(ids, id)].Text
		for _, e := range entries[id] {
			e.CriterionID, e.Criterion, e.Priority = id, text, "high"
			plan = append(plan, e)
		}
	}
	if len(kept) > 0 {
		vp := DraftTask{Type: "verify_preserve", Priority: "high", Description: "Before submitting: verify these strengths haven't regressed and " +
			"that earlier correctness fixes still hold after later changes — confirm each preserved item is present in the actual output, " +
			"and that passing criteria scores haven't dropped."}
		for _, id := range sortedKeys(kept) {
			vp.Items = append(vp.Items, kept[id])
		}
		plan = append(plan, vp)
	}
	msg := fmt.Sprintf("Improvements validated for %d criteria. %d criteria marked for preservation. Add each item from task_plan to your "+
		"task plan tool, then execute them. Do correctness-critical tasks first when present, then the remaining higher-order work. "+
		"The verify_preserve item at the end is a final guardrail — confirm preserved strengths are intact and that earlier correctness "+
		"fixes still hold after later changes before submitting. Do not defer blocker correctness fixes in favor of easier polish.",
		len(g.fails), len(kept))
	res := DraftResult{Valid: true, TaskPlan: plan, Message: msg}
	if len(kept) > 0 {
		res.Preserve = kept
	}
	return Verdict{Outcome: Accepted, Message: res.JSON()}
}

// objectOf reads a JSON object, or a JSON string holding one (some models
// send strings).
func objectOf(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func isEmptyJSON(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null" || s == "{}" || s == `""`
}

// improvementList reads one criterion's improvements: a list of entries
// (objects or strings), or a single entry.
func improvementList(raw json.RawMessage) []DraftTask {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		if isEmptyJSON(raw) {
			return nil
		}
		list = []json.RawMessage{raw}
	}
	var out []DraftTask
	for _, e := range list {
		t := DraftTask{Type: "improve", Impact: "incremental", Sources: []string{}}
		var s string
		var o struct {
			Plan    any   `json:"plan"`
			Sources []any `json:"sources"`
			Impact  string
		}
		switch {
		case json.Unmarshal(e, &s) == nil:
			t.Plan = s
		case json.Unmarshal(e, &o) == nil:
			if o.Plan != nil {
				t.Plan = fmt.Sprint(o.Plan)
			}
			for _, src := range o.Sources {
				t.Sources = append(t.Sources, fmt.Sprint(src))
			}
			if slices.Contains(impacts, o.Impact) {
				t.Impact = o.Impact
			}
		default:
			t.Plan = strings.TrimSpace(string(e))
		}
		out = append(out, t)
	}
	return out
}

func preserveItem(id string, raw json.RawMessage) PreserveItem {
	p := PreserveItem{CriterionID: id}
	var s string
	var o struct{ What, Source any }
	switch {
	case json.Unmarshal(raw, &s) == nil:
		p.What = s
	case json.Unmarshal(raw, &o) == nil:
		if o.What != nil {
			p.What = fmt.Sprint(o.What)
		}
		if o.Source != nil {
			p.Source = fmt.Sprint(o.Source)
		}
	default:
		p.What = strings.TrimSpace(string(raw))
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
