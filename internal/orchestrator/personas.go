package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/coord"
)

// Personas is upstream v0.1.73's persona generator
// (orchestrator.coordination.persona_generator): before the run, one call
// writes each agent a short persona — a perspective, a kind of solution, or
// a way of working, by Mode — so that agents on the same model explore
// different answers. The persona goes before the agent's system message
// while it has seen no other agent's answer; after that, After decides:
// drop it (the default: agents then synthesise freely), soften it to a
// preference, or keep it.
type Personas struct {
	Mode       string // perspective (default) | implementation | methodology
	After      string // drop (default) | soften | keep
	Guidelines string // persona_guidelines: added to the generator's prompt
}

// The diversity modes and what happens after the first peer answer.
const (
	PersonaPerspective    = "perspective"
	PersonaImplementation = "implementation"
	PersonaMethodology    = "methodology"
	PersonaDrop           = "drop"
	PersonaSoften         = "soften"
	PersonaKeep           = "keep"
)

// generatePersonas writes the agents' personas: the first agent answers
// one plain call asking for them as JSON. An agent the reply leaves out,
// or every agent when the call fails or its reply cannot be read, gets a
// fallback persona of the mode (as upstream falls back), and note says so.
func (r *runner) generatePersonas(ctx context.Context) (personas map[string]string, note string) {
	p := r.o.Personas
	if p == nil || len(r.o.Agents) < 2 {
		return nil, "" // one agent has nobody to differ from
	}
	ids := make([]string, len(r.o.Agents))
	for i, a := range r.o.Agents {
		ids[i] = a.ID
	}
	done := r.preRunCall(ctx, personaSystem, personaPrompt(p, r.question, r.o.Agents), "writing the agents' personas (persona_generator)")
	fallback := fallbackPersonas(p.Mode, ids)
	if done.Failure != nil {
		return fallback, fmt.Sprintf("the persona generation failed (%s): using fallback personas", done.Failure.Message)
	}
	got, err := ParsePersonas(done.Text, ids)
	if err != nil {
		return fallback, fmt.Sprintf("the generated personas were not usable (%v): using fallback personas", err)
	}
	var missing []string
	for _, id := range ids {
		if got[id] == "" {
			got[id] = fallback[id]
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		note = fmt.Sprintf("the generated personas left out %s: fallback personas for them", strings.Join(missing, ", "))
	}
	return got, note
}

// personaFor is what goes before agent id's system message for a turn
// that shows answers: its persona while no other agent's answer is among
// them, then the persona as After says.
func (r *runner) personaFor(id string, shown []coord.Answer) string {
	text := r.personas[id]
	if text == "" {
		return ""
	}
	peers := false
	for _, a := range shown {
		peers = peers || a.Agent != id
	}
	if !peers {
		return text
	}
	switch r.o.Personas.After {
	case PersonaKeep:
		return text
	case PersonaSoften:
		return "Your perspective at the start was:\n" + text + "\n\nNow that you have seen the other agents' answers, hold it as a " +
			"preference, not a position to defend: cover the whole task, weigh every approach on its merits, and combine the " +
			"strongest ideas into the best answer."
	}
	return ""
}

// withPersona puts a persona before a system prompt.
func withPersona(persona, system string) string {
	if persona == "" {
		return system
	}
	return "<persona>\n" + persona + "\n</persona>\n\n" + system
}

const personaSystem = "You give each agent of a team a distinct persona, so that agents working on the same task in parallel explore different answers. Reply with JSON only."

// personaPrompt asks for one persona per agent, for the mode's kind of
// diversity.
func personaPrompt(p *Personas, question string, agents []Agent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d AI agents will each answer this task on their own, in parallel, then compare their answers:\n\n<task>\n%s\n</task>\n\nAgents:\n", len(agents), question)
	ids := make([]string, len(agents))
	for i, a := range agents {
		ids[i] = a.ID
		if s := strings.TrimSpace(a.SystemMessage); s != "" {
			fmt.Fprintf(&b, "- %s, whose own instructions are: %s\n", a.ID, s)
		} else {
			fmt.Fprintf(&b, "- %s\n", a.ID)
		}
	}
	switch p.Mode {
	case PersonaImplementation:
		b.WriteString("\nGive each agent a different idea of WHAT KIND of solution to build: a different form, scope or experience " +
			"that is a valid reading of the task. Describe the direction, not the technology, the files or the steps.\n")
	case PersonaMethodology:
		b.WriteString("\nGive each agent a different WAY OF WORKING on the task (for example: structure first, the riskiest part " +
			"first, the simplest complete version then passes, from concrete examples backwards). Describe how to proceed, " +
			"not what the answer should be.\n")
	default:
		b.WriteString("\nGive each agent a different PERSPECTIVE: what it values most, which trade-offs it makes, what it will " +
			"not compromise on. Describe what to optimise for and why, not how to implement it.\n")
	}
	b.WriteString("Each persona is 3 to 5 sentences. Every agent must still answer the WHOLE task, completely and well: " +
		"personas differ in approach, never in scope, so never give an agent a narrow role. Where an agent has instructions " +
		"of its own, the persona adds to them without changing them.\n")
	if g := strings.TrimSpace(p.Guidelines); g != "" {
		fmt.Fprintf(&b, "\nGuidelines:\n%s\n", g)
	}
	agentIDs, _ := json.Marshal(ids)
	fmt.Fprintf(&b, "\nReply with one JSON object and nothing else, with a persona for each of %s:\n"+
		`{"personas": {"<agent id>": {"persona_text": "...", "attributes": {"approach_summary": "2-3 words"}}}}`, agentIDs)
	return b.String()
}

// ParsePersonas reads generated personas from a model's reply: the JSON
// object itself, a fenced block, or the object that starts at
// {"personas". It keeps the personas of the given agent ids (a persona
// given as a plain string is taken as its text) and fails when none is
// found.
func ParsePersonas(text string, ids []string) (map[string]string, error) {
	candidates := []string{strings.TrimSpace(text)}
	if m := fenced().FindStringSubmatch(text); m != nil {
		candidates = append(candidates, m[1])
	}
	if i := strings.Index(text, `{"personas"`); i >= 0 {
		candidates = append(candidates, text[i:])
	}
	for _, c := range candidates {
		var doc struct {
			Personas map[string]json.RawMessage `json:"personas"`
		}
		if json.NewDecoder(strings.NewReader(c)).Decode(&doc) != nil || len(doc.Personas) == 0 {
			continue
		}
		out := map[string]string{}
		for _, id := range ids {
			raw, ok := doc.Personas[id]
			if !ok {
				continue
			}
			var p struct {
				Text string `json:"persona_text"`
			}
			var s string
			switch {
			case json.Unmarshal(raw, &p) == nil && strings.TrimSpace(p.Text) != "":
				out[id] = strings.TrimSpace(p.Text)
			case json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) != "":
				out[id] = strings.TrimSpace(s)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("no persona for any of the agents in the reply")
}

// fallbackPersonas are the personas of a mode when generation fails: five
// distinct ones, given round-robin.
func fallbackPersonas(mode string, ids []string) map[string]string {
	texts := []string{
		"You work analytically: break the problem into parts, examine each with care, and let evidence and sound reasoning decide.",
		"You look for the inventive solution: question the obvious approach and propose ideas the others may overlook.",
		"You are thorough and systematic: cover every requirement, keep a consistent method, and let no important detail slip.",
		"You are the critic: question assumptions, look for weaknesses and edge cases, and make the answer robust.",
		"You are practical: weigh real-world constraints and feasibility, and prefer what works and can be acted on.",
	}
	if mode == PersonaMethodology {
		texts = []string{
			"Sketch the whole structure first, then work down into the details, so everything fits before any part goes deep.",
			"Find the hardest, riskiest part of the task and get it working first: if it fails, everything else is wasted.",
			"Start with the simplest complete version that could work, then improve it in passes, each leaving it working.",
			"Start from concrete examples of the result you want, and work backwards from them to what is needed.",
			"Lay a solid foundation with proven patterns first, and innovate only once it holds.",
		}
	}
	out := make(map[string]string, len(ids))
	for i, id := range ids {
		out[id] = texts[i%len(texts)]
	}
	return out
}
