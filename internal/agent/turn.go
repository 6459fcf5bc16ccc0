package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// MaxAttempts is how many responses a turn may take to produce a valid
// workflow action before it counts as a failed turn. Responses that only
// ran tools (tool steps) are not attempts: they are bounded by MaxToolSteps.
const MaxAttempts = 3

// MaxToolSteps is the default bound on tool steps (responses that ran
// tools) in one turn: a model that keeps calling tools without ever
// answering or voting fails its turn instead of spending without end.
const MaxToolSteps = 20

// llmTurn is one coordination turn of the LLM agent: the tool loop
// behind LLM.Run for TaskCoordinate.
type llmTurn struct {
	Model   llm.Model
	Request llm.Request // Model and Params set; Messages and Tools are filled in by Run
	System  string      // coordination system prompt
	User    string      // coordination user message (task + answers)
	Answers []coord.Answer
	Epoch   int // epoch of Answers
	Emit    Emitter
	// Tools are the agent's own tools, offered after the workflow tools.
	// A name that collides with a workflow tool fails the turn.
	Tools *tool.Set
	// MaxToolSteps overrides the package default when > 0.
	MaxToolSteps int
	// ToolTimeout bounds each tool call when > 0.
	ToolTimeout time.Duration
	// OnTool is told about every call of one of Tools, in call order once a
	// step's calls have all finished.
	OnTool func(call llm.ToolCall, res tool.Result, d time.Duration)
	// Judge submits a proposed action to the coordinator, which judges it
	// against the state at this moment. seen is the epoch of the answer set
	// the model saw when it decided.
	Judge func(seen int, act coord.Action) coord.Verdict
	// Updates delivers newer answer sets (restart_policy: inject): they are
	// shown to the model before its next request, after a tool step or a
	// rejected response. Under restart_policy: restart none is posted: a
	// newer answer cancels the turn instead.
	Updates *Inbox
	// OnReject is told about every rejected attempt (for events and logs).
	OnReject func(reason string)
	// Decomposition and Subtasks are Task's (decomposition mode).
	Decomposition bool
	Subtasks      map[string]string
	// Checklist offers submit_checklist and draft_approach once answers
	// exist: tool steps judged by the coordinator (checklist-gated
	// voting), served through Kit.
	Checklist bool
	Kit       tool.ChecklistKit
	// CompressionRatio is the share of the turn's own messages kept as they
	// are when a context overflow compacts the rest (compact.go); 0 means
	// DefaultCompressionRatio.
	CompressionRatio float64
}

// Result is how a turn ended.
type Result struct {
	Verdict coord.Verdict // the last verdict, when an action was judged
	Action  coord.Action
	Usage   llm.Usage // every request of the turn, tool steps included
	// Attempts counts the responses that were not tool steps (the failed
	// request included, when one failed); Steps counts the tool steps.
	Attempts int
	Steps    int
	// Err is set when the turn ended without an accepted or stale action:
	// a provider error, a cancelled context, MaxAttempts invalid responses
	// or too many tool steps.
	Err error
}

// Run plays the turn to its end: requests, tool steps, attempts at a
// workflow action, until the coordinator accepts one (or finds it stale).
func (t *llmTurn) Run(ctx context.Context) Result {
	p := &play{t: t, answers: t.Answers, seen: t.Epoch, maxSteps: cmp.Or(max(t.MaxToolSteps, 0), MaxToolSteps)}
	p.req = t.Request
	p.req.Messages = []llm.Message{{Role: llm.RoleSystem, Content: t.System}, {Role: llm.RoleUser, Content: t.User}}
	// Tools still being started (MCP servers) are waited for here, when
	// the first request needs their definitions, and not before.
	own, err := t.Tools.Resolve(ctx)
	if err != nil {
		p.res.Err = &toolsError{err}
		return p.res
	}
	p.own = own
	p.res.Err = p.loop(ctx)
	return p.res
}

// play is the state of one Run.
type play struct {
	t        *llmTurn
	own      *tool.Set // t.Tools, resolved
	req      llm.Request
	res      Result
	answers  []coord.Answer
	seen     int // epoch of answers
	maxSteps int
	verdict  *coord.Verdict // set by the workflow tool that ran last
	// restricted is set by the hard round timeout: only the workflow
	// tools are offered, and calls of the others are refused.
	restricted  bool
	checklistMu sync.Mutex
}

// judge is the workflow tools' Judge: it asks the coordinator about the
// answer set the model has seen and keeps the verdict for the turn.
func (p *play) judge(act coord.Action) coord.Verdict {
	v := p.t.Judge(p.seen, act)
	p.res.Action, p.res.Verdict, p.verdict = act, v, &v
	return v
}

// judgeChecklist puts a submit_checklist call to the coordinator. It is a
// step of the turn, not its end, so it leaves the turn's verdict alone;
// calls of one response are put one at a time, so each reads its own
// verdict from the inbox.
func (p *play) judgeChecklist(act coord.Action) coord.Verdict {
	p.checklistMu.Lock()
	defer p.checklistMu.Unlock()
	return p.t.Judge(p.seen, act)
}

func (p *play) loop(ctx context.Context) error {
	t := p.t
	lastReason := ""
	compactions := 0
	for {
		p.deliverUpdates()
		p.deliverWrapUps()
		// The vote enum follows the answers the model has been shown.
		own := p.own
		if p.restricted {
			own = nil
		}
		wf := workflowTools(p.answers, p.judge)
		if t.Decomposition {
			wf = tool.DecompositionTools(p.judge)
		}
		if t.Checklist && len(p.answers) > 0 {
			wf = append(wf, tool.GatedChecklistTool(p.judgeChecklist, t.Kit), tool.DraftTool(p.judgeChecklist, t.Kit))
		}
		tools, err := own.With(wf...)
		if err != nil {
			return &toolsError{err}
		}
		p.req.Tools = tools.Defs()
		r, err := collect(ctx, t.Model, &p.req, t.Emit)
		p.res.Usage.Add(r.usage)
		if window, over := llm.ContextOverflow(err); over {
			if compactions < maxCompactions && p.compact(ctx, window, compactions) {
				compactions++
				continue
			}
			p.res.Attempts++
			return fmt.Errorf("%w (the turn's prompt does not fit the model's context window, even with its older messages compacted)", err)
		}
		if err != nil {
			p.res.Attempts++
			return err
		}
		compactions = 0
		p.req.Messages = append(p.req.Messages, llm.Message{Role: llm.RoleAssistant, Content: r.text, ToolCalls: r.calls})

		s := sortCalls(r.calls, tools)
		if p.restricted {
			for i, c := range r.calls {
				if _, mine := p.own.Lookup(c.Name); mine && !s.isWorkflow(i) {
					end := "vote"
					if t.Decomposition {
						end = "stop"
					}
					s.results[i] = tool.Errorf("HARD ROUND TIMEOUT: tool %q is blocked; only %s or new_answer are allowed now. Call one of them.", c.Name, end)
				}
			}
		}
		if len(s.run) > 0 {
			if p.res.Steps >= p.maxSteps {
				return &protocolError{fmt.Sprintf("tool step limit reached: the model kept calling tools for %d steps of one turn without a workflow action (limit %d)", p.maxSteps+1, p.maxSteps)}
			}
			p.res.Steps++
			t.runTools(ctx, r.calls, s, tools)
			if len(s.workflow) == 0 {
				// A tool step: the model reads the results and goes on.
				p.req.Messages = append(p.req.Messages, toolMessages(r.calls, s.results)...)
				continue
			}
		}
		// The response is an attempt at a workflow action; with tools in
		// it, they have run first, so their results stand whatever the verdict.
		p.res.Attempts++
		reason, done := p.attempt(ctx, r, s, tools)
		if done {
			return nil
		}
		lastReason = reason
		if t.OnReject != nil {
			t.OnReject(reason)
		}
		// Corrective feedback goes back the way the model will read it: as
		// tool results when it called tools, as a user message otherwise.
		if len(r.calls) == 0 {
			p.req.Messages = append(p.req.Messages, llm.Message{Role: llm.RoleUser, Content: reason})
		} else {
			p.req.Messages = append(p.req.Messages, toolMessages(r.calls, s.results)...)
		}
		if p.res.Attempts >= MaxAttempts {
			return &protocolError{fmt.Sprintf("no valid workflow action after %d attempts (last problem: %s)", MaxAttempts, lastReason)}
		}
	}
}

// compact replaces the older part of the conversation by a summary after
// a context overflow (compact.go): the first time keeping the newest
// CompressionRatio of it, the second time none. The newest answer set
// must stay in view whole: if it was among the messages summarised, it is
// shown again.
func (p *play) compact(ctx context.Context, window, before int) bool {
	keep := cmp.Or(p.t.CompressionRatio, DefaultCompressionRatio)
	if before > 0 {
		keep = 0
	}
	c, ok := compact(ctx, p.t.Model, &p.req, keep, window, p.t.Emit)
	p.res.Usage.Add(c.usage)
	if !ok {
		return false
	}
	latest := UpdateMessage(p.answers)
	shown := func(msgs []llm.Message) bool {
		return slices.ContainsFunc(msgs, func(m llm.Message) bool { return m.Role == llm.RoleUser && m.Content == latest })
	}
	if shown(c.removed) && !shown(p.req.Messages[compactHead:]) {
		p.req.Messages = append(p.req.Messages, llm.Message{Role: llm.RoleUser, Content: latest})
	}
	return true
}

// deliverUpdates shows the model any answer set that arrived since its
// last request (restart_policy: inject), so it never decides on a view we
// already know is stale.
func (p *play) deliverUpdates() {
	if u, ok := p.t.Updates.TakeUpdate(); ok {
		p.answers, p.seen = u.Answers, u.Epoch
		p.req.Messages = append(p.req.Messages, llm.Message{Role: llm.RoleUser, Content: p.updateMessage()})
	}
}

// deliverWrapUps shows the model the round-time messages that arrived
// (per-round timeouts) before its next request; after the hard limit only
// the workflow tools remain.
func (p *play) deliverWrapUps() {
	for _, w := range p.t.Updates.TakeWrapUps() {
		p.req.Messages = append(p.req.Messages, llm.Message{Role: llm.RoleUser, Content: w.Message})
		if w.Hard {
			p.restricted = true
		}
	}
}

// attempt judges the workflow action of a response whose tools (if any)
// have run. It fills in the results of the workflow calls and reports
// whether the turn is over; if not, reason says what was wrong.
func (p *play) attempt(ctx context.Context, r response, s sorted, tools *tool.Set) (reason string, done bool) {
	if len(s.workflow) == 0 {
		if len(r.calls) == 0 {
			return p.enforcement(), false
		}
		// Every call was to a tool that does not exist: each has its error
		// result already; the first one also says what to do instead.
		s.results[0].Content += " " + p.enforcement()
		return fmt.Sprintf("Tool %q is not available here. %s", r.calls[0].Name, p.enforcement()), false
	}
	calls := make([]coord.Call, len(s.workflow))
	for i, ix := range s.workflow {
		c := r.calls[ix]
		calls[i] = coord.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	primary := r.calls[s.workflow[0]]
	act, reason, _, ok := coord.ParseAction(calls, r.text)
	if ok {
		p.verdict = nil
		wf, offered := tools.Lookup(primary.Name)
		if !offered { // vote with no answers yet: the coordinator says why not
			wf = tool.VoteTool(nil, p.judge)
		}
		res := tool.Invoke(ctx, wf, actionArgs(act, primary.Arguments), 0)
		if p.verdict != nil && p.verdict.Outcome != coord.Rejected {
			return "", true
		}
		reason = res.Content
	}
	for _, ix := range s.workflow[1:] {
		s.results[ix] = tool.Result{IsError: true, Content: "Not executed: see the error on the " + primary.Name + " call of this response."}
	}
	s.results[s.workflow[0]] = tool.Result{IsError: true, Content: reason}
	return reason, false
}

// actionArgs are the arguments the workflow tool is called with: the
// model's own, except that new_answer without content takes the response
// text (as upstream does), which ParseAction has already put in act.
func actionArgs(act coord.Action, raw string) string {
	if act.Kind != coord.ActNewAnswer {
		return raw
	}
	b, _ := json.Marshal(map[string]string{"content": act.Content})
	return string(b)
}

// workflowTools are the workflow tools offered for this answer set: vote
// only when there is something to vote for.
func workflowTools(answers []coord.Answer, judge tool.Judge) []tool.Tool {
	tools := []tool.Tool{tool.NewAnswerTool(judge)}
	if len(answers) > 0 {
		labels := make([]string, len(answers))
		for i, a := range answers {
			labels[i] = a.Label
		}
		tools = append(tools, tool.VoteTool(labels, judge))
	}
	return tools
}

// toolMessages are the results of one response's calls, one per call in
// call order, as RoleTool messages; an error result is marked "Error: "
// in its text, which every provider shows the model.
func toolMessages(calls []llm.ToolCall, results []tool.Result) []llm.Message {
	out := make([]llm.Message, len(calls))
	for i, c := range calls {
		content := results[i].Content
		if results[i].IsError && !strings.HasPrefix(content, "Error") {
			content = "Error: " + content
		}
		out[i] = llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: content, IsError: results[i].IsError, Images: results[i].Images}
	}
	return out
}
