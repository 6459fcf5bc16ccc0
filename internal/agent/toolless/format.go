package toolless

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// offer is what a coordination request offers: new_answer always, vote
// for these labels when answers exist.
type offer struct {
	labels []string // vote's agent_id enum; nil: no vote offered
	vote   bool
	stop   bool // decomposition mode's stop (stop.go)
}

// offerOf reads the workflow tools of a request. ok is false when it
// offers no new_answer: not a coordination request.
func offerOf(tools []llm.ToolDef) (o offer, ok bool) {
	for _, t := range tools {
		switch t.Name {
		case coord.ToolNewAnswer:
			ok = true
		case coord.ToolVote:
			o.vote = true
			o.labels = enumOf(t.Parameters, "agent_id")
		case coord.ToolStop:
			o.stop = true
		}
	}
	return o, ok
}

// enumOf is the enum of one property of a JSON schema object.
func enumOf(schema map[string]any, prop string) []string {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	switch e := p["enum"].(type) {
	case []string:
		return e
	case []any:
		out := make([]string, 0, len(e))
		for _, v := range e {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	return nil
}

// Lengths the schema bounds an action's texts to: a grammar-constrained
// small model may otherwise fill its whole output budget with one string.
const (
	maxContent = 4000
	maxReason  = 400
)

// schema is the response_format whose instances are exactly the actions
// open now. vote comes first when offered: a model reviewing answers
// mostly votes, and a schema's first choice is what the weakest models
// fall into.
func (o offer) schema() map[string]any {
	answer := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action":  map[string]any{"type": "string", "enum": []string{coord.ToolNewAnswer}},
			"content": map[string]any{"type": "string", "minLength": 1, "maxLength": maxContent},
		},
		"required":             []string{"action", "content"},
		"additionalProperties": false,
	}
	var root map[string]any
	if o.stop {
		root = map[string]any{"oneOf": []any{stopSchema(), answer}}
	} else if o.vote && len(o.labels) > 0 {
		vote := map[string]any{
			"type": "object",
			"properties": map[string]any{
				"action":   map[string]any{"type": "string", "enum": []string{coord.ToolVote}},
				"agent_id": map[string]any{"type": "string", "enum": o.labels},
				"reason":   map[string]any{"type": "string", "maxLength": maxReason},
			},
			"required":             []string{"action", "agent_id", "reason"},
			"additionalProperties": false,
		}
		root = map[string]any{"oneOf": []any{vote, answer}}
	} else {
		root = answer
	}
	return map[string]any{
		"type":        "json_schema",
		"json_schema": map[string]any{"name": "workflow_action", "strict": true, "schema": root},
	}
}

// instructions replace the tool definitions in the system prompt: what
// the model may do, and the exact shape of its reply.
func (o offer) instructions(mode Mode) string {
	var b strings.Builder
	b.WriteString("\n\n## How to reply\nYou cannot call tools here. Reply with exactly one action")
	if mode == JSONSchema {
		// The fields are described in prose, not by a placeholder in the
		// object: a small model copies "<your answer>" into its reply.
		b.WriteString(", as one JSON object and nothing else:\n")
		b.WriteString(`- to give a new answer: {"action": "new_answer", "content": ...} with your complete answer to the original message in "content"` + "\n")
		if o.vote {
			fmt.Fprintf(&b, `- to vote for the best existing answer: {"action": "vote", "agent_id": ..., "reason": ...} with "agent_id" one of %s and, in "reason", why it is best`+"\n", strings.Join(o.labels, ", "))
		}
		if o.stop {
			b.WriteString(stopJSONLine)
		}
	} else {
		b.WriteString(", in this form and nothing else:\n")
		b.WriteString("- to give a new answer: a line `ANSWER:` followed by your complete answer to the original message\n")
		if o.vote {
			fmt.Fprintf(&b, "- to vote for the best existing answer: a line `VOTE: <agent id, one of: %s>` and a line `REASON: <why it is best>`\n", strings.Join(o.labels, ", "))
		}
		if o.stop {
			b.WriteString(stopTextLine)
		}
	}
	if o.vote {
		b.WriteString("Vote when an existing answer is already correct and complete; give a new answer only to improve on them.")
	}
	return b.String()
}

// render writes an action the model took (a call it made through this
// seam) back into the conversation in the form it was asked for.
func render(mode Mode, c llm.ToolCall) string {
	var args map[string]any
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	str := func(k string) string { s, _ := args[k].(string); return s }
	if mode == JSONSchema {
		out := map[string]any{"action": c.Name}
		for k, v := range args {
			out[k] = v
		}
		b, _ := json.Marshal(out)
		return string(b)
	}
	switch c.Name {
	case coord.ToolVote:
		return "VOTE: " + str("agent_id") + "\nREASON: " + str("reason")
	case coord.ToolNewAnswer:
		return "ANSWER: " + str("content")
	case coord.ToolStop:
		return "STOP: " + str("summary") + "\nSTATUS: " + str("status")
	}
	return c.Name + " " + c.Arguments
}

var (
	markerRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?im)^[\s*#>_` + "`" + `]*(ANSWER|VOTE|REASON)[\s*_]*:[\s*_]*`)
	})
	labelRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9_-]*`) })
)

// parse reads an action from a reply: a JSON object ({"action": …}) or the
// ANSWER:/VOTE: lines, whichever the reply holds, so a server that
// ignores response_format still gets through. A reply with neither is an
// answer when there is nothing to vote for yet, and no action otherwise
// (the turn then asks again). ok is false when no action could be read.
func parse(text string, o offer) (name string, args map[string]any, ok bool) {
	if name, args, ok := parseJSON(text); ok {
		return name, args, true
	}
	re := markerRe()
	if o.stop {
		re = stopMarkerRe() // STOP: and STATUS: lines only where stop is offered (stop.go)
	}
	locs := re.FindAllStringSubmatchIndex(text, -1)
	field := func(kind string) (string, bool) {
		for i, l := range locs {
			if !strings.EqualFold(text[l[2]:l[3]], kind) {
				continue
			}
			end := len(text)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			return strings.TrimSpace(text[l[1]:end]), true
		}
		return "", false
	}
	if v, found := field("VOTE"); found {
		reason, _ := field("REASON")
		return coord.ToolVote, map[string]any{"agent_id": matchLabel(v, o.labels), "reason": reason}, true
	}
	if v, found := field("STOP"); found && o.stop {
		status, _ := field("STATUS")
		return coord.ToolStop, map[string]any{"summary": v, "status": strings.ToLower(strings.Trim(status, " .`*"))}, true
	}
	if v, found := field("ANSWER"); found && v != "" {
		return coord.ToolNewAnswer, map[string]any{"content": v}, true
	}
	if t := strings.TrimSpace(text); t != "" && !o.vote {
		return coord.ToolNewAnswer, map[string]any{"content": t}, true
	}
	return "", nil, false
}

// parseJSON reads {"action": "new_answer"|"vote", …} from the first JSON
// object in text (a model may wrap it in a code fence).
func parseJSON(text string) (string, map[string]any, bool) {
	start := strings.IndexByte(text, '{')
	if start < 0 {
		return "", nil, false
	}
	var obj map[string]any
	if json.NewDecoder(strings.NewReader(text[start:])).Decode(&obj) != nil {
		return "", nil, false
	}
	act, _ := obj["action"].(string)
	delete(obj, "action")
	switch act {
	case coord.ToolNewAnswer, coord.ToolVote, coord.ToolStop:
		return act, obj, true
	}
	return "", nil, false
}

// matchLabel finds the offered label a vote's text names ("Agent1",
// "agent 1", "`agent1` because …"); the longest that fits wins (agent10
// over agent1). Otherwise the first word is kept, for the coordinator to
// refuse with its reason.
func matchLabel(v string, labels []string) string {
	line, _, _ := strings.Cut(v, "\n")
	squeezed := strings.ToLower(strings.Map(func(r rune) rune {
		if r == ' ' || r == '`' || r == '"' || r == '\'' || r == '*' || r == '<' || r == '>' {
			return -1
		}
		return r
	}, line))
	best := ""
	for _, l := range labels {
		if strings.HasPrefix(squeezed, strings.ToLower(l)) && len(l) > len(best) {
			best = l
		}
	}
	if best != "" {
		return best
	}
	return labelRe().FindString(line)
}
