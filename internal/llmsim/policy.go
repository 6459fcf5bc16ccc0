package llmsim

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// plan is everything the simulator decided about one request before a byte
// is written; the exchange (exchange.go) and the wire's encoder only carry
// it out, the same way for every wire format.
type plan struct {
	step  string     // Record.Step: "answer", "vote", "text", "fault:429", ...
	text  string     // assistant content, streamed before any tool call
	calls []toolCall // tool calls, in order (index 0, 1, ...)

	status     int     // > 0: answer with this HTTP error status instead
	errText    string  // message of the status error ("" = the provider's usual one)
	retryAfter float64 // seconds, for status faults
	transport  string  // faultCut or faultHang: break the exchange itself

	ttft       time.Duration
	ttftForced bool // the step set ttft_ms itself (status faults wait only then)
	tps        float64
}

type toolCall struct {
	name, args string
}

// tokens is the number of simulated completion tokens the plan produces:
// one per text fragment, one per tool-call header (its name), one per
// argument fragment. It is what every wire reports as output tokens.
func (p *plan) tokens() int {
	n := countTokens(p.text)
	for _, c := range p.calls {
		n += 1 + countTokens(c.args)
	}
	return n
}

func (p *plan) finishReason() string {
	if len(p.calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// modelState is the per-model-name script cursor and answer counter.
type modelState struct {
	script  script
	next    int // index of the next queued step
	answers int // new_answer calls produced so far (the {n} of the next one is answers+1)
}

// phase classifies a request by the tools it offers; Step.When matches it.
func phase(req *request) string {
	switch {
	case req.offers("new_answer"):
		return WhenCoordination
	case req.offers("submit") || req.offers("restart_orchestration"):
		return WhenEvaluation
	}
	// No workflow tool: a presentation, with or without tools of its own
	// (a workspace's, or a coding-agent CLI's built-in ones).
	return WhenPresentation
}

func whenMatches(when, ph string) bool { return when == "" || when == ph }

// selection is the outcome of step selection for one request.
type selection struct {
	step   *Step  // nil: default policy
	kind   string // see actionOf
	label  string // Record.Step
	n      int    // number of the model's next answer
	script script // the model's merged script (immutable once resolved)
}

// selectLocked picks the step for a request and counts the answer, in
// arrival order per model. The caller holds s.mu; everything slower (text
// generation, JSON) happens in buildPlan, outside the lock.
func (s *Server) selectLocked(req *request) selection {
	if req.afterAction() {
		// The turn is over; the client asks once more out of habit.
		return selection{kind: "done", label: "text"}
	}
	ph := phase(req)
	st := s.models[req.model]
	if st == nil {
		st = &modelState{script: s.sc.scriptFor(req.model)}
		s.models[req.model] = st
	}
	var step *Step
	switch {
	case st.script.always != nil && whenMatches(st.script.always.When, ph):
		step = st.script.always
	case st.next < len(st.script.steps) && whenMatches(st.script.steps[st.next].When, ph):
		step = &st.script.steps[st.next]
		st.next++
	}
	sel := selection{step: step, kind: actionOf(step, req), n: st.answers + 1, script: st.script}
	sel.label = sel.kind
	if step != nil && step.Fault != "" {
		sel.label = "fault:" + step.Fault
	}
	if sel.kind == "answer" {
		st.answers++ // cut and hang bodies quote answer n without consuming it
	}
	return sel
}

// buildPlan turns a selection into the response to send.
func buildPlan(req *request, sel selection) *plan {
	step, kind, n, sc := sel.step, sel.kind, sel.n, sel.script
	if step == nil && sc.quality != nil {
		// A model with a quality rate acts on its belief about the item.
		if p := qualityPlan(req, kind, sc.quality); p != nil {
			p.tps, p.ttft = sc.tps, time.Duration(sc.ttftMillis)*time.Millisecond
			return p
		}
	}
	p := &plan{step: sel.label, tps: sc.tps, ttft: time.Duration(sc.ttftMillis) * time.Millisecond}
	if step != nil && step.TTFTMillis != nil {
		p.ttft = time.Duration(*step.TTFTMillis) * time.Millisecond
		p.ttftForced = true
	}
	if step != nil {
		p.text = step.Text
	}
	switch kind {
	case "answer":
		content := sc.answer
		if step != nil && step.Answer != "" {
			content = step.Answer
		}
		if content == "" {
			content = defaultAnswer(req, n)
		} else {
			content = expand(content, req, n, "")
		}
		if step != nil && step.Fault == faultMalformedToolJSON {
			p.calls = []toolCall{{req.nameOf("new_answer"), malformedArguments(content)}}
			return p
		}
		p.calls = []toolCall{{req.nameOf("new_answer"), mustJSON(struct {
			Content string `json:"content"`
		}{content})}}
	case "vote":
		label, reason := "", ""
		if step != nil && step.Vote != "" {
			label, reason = step.Vote, step.Reason
		} else {
			label = "agent1" // what MassGen labels the first answer, if the enum is missing
			if len(req.voteEnum) > 0 {
				label = req.voteEnum[0]
			}
			reason = "simulated vote: " + label + " is complete"
			if sc.voteReason != "" {
				reason = expand(sc.voteReason, req, n, label)
			}
		}
		p.calls = []toolCall{{req.nameOf("vote"), mustJSON(struct {
			AgentID string `json:"agent_id"`
			Reason  string `json:"reason"`
		}{label, reason})}}
	case "stop":
		p.calls = []toolCall{stopCall(req)}
	case "submit":
		p.calls = []toolCall{{req.nameOf("submit"), `{"confirmed":true}`}}
	case "restart":
		p.calls = []toolCall{{req.nameOf("restart_orchestration"), mustJSON(struct {
			Reason       string `json:"reason"`
			Instructions string `json:"instructions"`
		}{step.Restart, step.Reason})}}
	case "calls":
		for _, c := range step.Calls {
			args := c.Arguments
			if args == "" {
				args = "{}"
			}
			p.calls = append(p.calls, toolCall{req.nameOf(c.Name), args}) // a kit tool under a CLI's prefix too
		}
	case "done":
		p.text = "Done: my action is with the coordinator."
	case "checklist":
		p.calls = []toolCall{{req.nameOf("submit_checklist"), req.checklistScores()}}
	case "report":
		p.calls = []toolCall{req.reportCall()}
	case "fault":
		status, name, _ := parseFault(step.Fault)
		switch {
		case status > 0:
			p.status, p.errText, p.retryAfter = status, step.Text, step.RetryAfter
			p.text = ""
		case name == faultNoToolCall:
			if p.text == "" {
				p.text = noToolText(req)
			}
		default: // cut, hang: stream what the default policy would have said
			p.transport = name
			if p.text == "" {
				base := defaultOnly(req, n)
				p.text, p.calls = base.text, base.calls
			}
		}
	default: // "text"
		if p.text == "" {
			p.text = finalText(req, sc.final)
		}
	}
	return p
}

// actionOf names what a step (or, for nil or an empty step, the default
// policy) will do for this request.
func actionOf(step *Step, req *request) string {
	if step != nil {
		switch {
		case step.Answer != "" || step.Fault == faultMalformedToolJSON:
			return "answer"
		case step.Vote != "":
			return "vote"
		case step.Submit:
			return "submit"
		case step.Restart != "":
			return "restart"
		case len(step.Calls) > 0:
			return "calls"
		case step.Fault != "":
			return "fault"
		case step.Text != "":
			return "text"
		}
	}
	// Default policy: vote when answers exist (the vote tool is offered only
	// then), otherwise answer; post-evaluation submits; no workflow tool
	// means a presentation (or a plain chat) and gets text.
	switch {
	case req.offers("submit_checklist") && req.offers("vote") && !req.scored() && req.wantsReport() && !req.reported():
		return "report" // ... after writing its diagnostic report (report.go)
	case req.offers("submit_checklist") && (req.offers("vote") || req.offers("stop")) && !req.scored():
		return "checklist" // a checklist-gated agent scores first
	case req.offers("vote"):
		return "vote"
	case req.offers("stop") && req.showsWork():
		return "stop" // decomposition mode: work shared, done (stop.go)
	case req.offers("new_answer"):
		return "answer"
	case req.offers("submit"):
		return "submit"
	}
	return "text"
}

// defaultOnly is the default policy's response without touching any cursor
// or counter, used as the body of cut and hang faults.
func defaultOnly(req *request, n int) plan {
	var p plan
	switch actionOf(nil, req) {
	case "vote":
		label := "agent1"
		if len(req.voteEnum) > 0 {
			label = req.voteEnum[0]
		}
		p.calls = []toolCall{{req.nameOf("vote"), mustJSON(struct {
			AgentID string `json:"agent_id"`
			Reason  string `json:"reason"`
		}{label, "simulated vote: " + label + " is complete"})}}
	case "answer":
		p.calls = []toolCall{{req.nameOf("new_answer"), mustJSON(struct {
			Content string `json:"content"`
		}{defaultAnswer(req, n)})}}
	case "stop":
		p.calls = []toolCall{stopCall(req)}
	case "submit":
		p.calls = []toolCall{{req.nameOf("submit"), `{"confirmed":true}`}}
	case "checklist":
		p.calls = []toolCall{{req.nameOf("submit_checklist"), req.checklistScores()}}
	case "report":
		p.calls = []toolCall{req.reportCall()}
	default:
		p.text = finalText(req, "")
	}
	return p
}

// expand fills the placeholders of a scripted text: {model}, {n} (the
// answer's number), {question} (the start of the task, as the default
// answers quote it, without a closing period) and {label} (the answer a
// vote is for).
func expand(t string, req *request, n int, label string) string {
	if !strings.Contains(t, "{") {
		return t
	}
	return strings.NewReplacer("{model}", req.model, "{n}", strconv.Itoa(n), "{label}", label,
		"{question}", strings.TrimRight(taskExcerpt(req), ".")).Replace(t)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("llmsim: " + err.Error()) // only fixed struct types are marshalled
	}
	return string(b)
}
