package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/llm"
)

// workflowPrefix names the workflow tools as Claude Code calls them; their
// calls are proposals, not the agent's own tool use.
const workflowPrefix = "mcp__" + cli.WorkflowServer + "__"

// line is one stream-json line, the members of every kind it reads.
type line struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	Model           string          `json:"model"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Event           *streamEvent    `json:"event"`
	Message         *message        `json:"message"`
	MCPServers      []mcpStatus     `json:"mcp_servers"`
	IsError         bool            `json:"is_error"`
	Result          *string         `json:"result"`
	TotalCostUSD    float64         `json:"total_cost_usd"`
	Usage           *usage          `json:"usage"`
	APIErrorStatus  *int            `json:"api_error_status"`
	Errors          json.RawMessage `json:"errors"`
	// An assistant message that stands for an API error, not a response.
	IsAPIErrorMessage bool `json:"is_api_error_message"`
	// api_retry: a failed request Claude Code tries again.
	ErrorStatus int    `json:"error_status"`
	Error       string `json:"error"`
}

type mcpStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// streamEvent is an Anthropic Messages stream event, passed through.
type streamEvent struct {
	Type         string   `json:"type"`
	Message      *message `json:"message"` // message_start
	ContentBlock *block   `json:"content_block"`
	Delta        *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
	} `json:"delta"`
	Usage *usage `json:"usage"` // message_delta
}

type message struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *usage          `json:"usage"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	OutputTokensDetails      *struct {
		ThinkingTokens int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// llm is the usage in massgen's terms, as the anthropic adapter counts it:
// cache reads and writes are input tokens too.
func (u *usage) llm() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	out := llm.Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens: u.OutputTokens, CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
	if u.OutputTokensDetails != nil {
		out.ReasoningTokens = u.OutputTokensDetails.ThinkingTokens
	}
	return out
}

// call is a tool call of Claude Code's waiting for its result.
type call struct {
	name  string
	args  string
	start time.Time
}

// decoder reads one task's stream-json.
type decoder struct {
	res      cli.Result
	model    string
	streamed bool // partial messages arrive: text is reported from them

	// The model response being streamed.
	msgStart time.Time
	msgModel string
	msgUsage usage
	inMsg    bool

	calls     map[string]call
	lastText  string // the last response's text, should no result line come
	total     llm.Usage
	gotResult bool
	// workflowDown: the workflow tools' server did not connect.
	workflowDown bool
}

func newDecoder() *decoder { return &decoder{calls: map[string]call{}} }

// Line implements cli.Decoder.
func (d *decoder) Line(b []byte) []agent.Outcome {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var l line
	if json.Unmarshal(b, &l) != nil {
		return nil
	}
	if l.SessionID != "" {
		d.res.Session = l.SessionID
	}
	if l.ParentToolUseID != nil && *l.ParentToolUseID != "" {
		return nil // a subagent's (Task is disallowed; should one run, its cost is in the result)
	}
	switch l.Type {
	case "system":
		if l.Subtype == "api_retry" {
			// A failed request: a model call of its own, as the LLM agent
			// reports one.
			err := &llm.Error{Provider: Type, Model: d.model, Status: l.ErrorStatus, Retry: true, Message: l.Error}
			return []agent.Outcome{agent.ModelCall{Model: d.model, Failure: agent.FailureOf(err, "", Type, d.model)}}
		}
		if l.Subtype == "init" {
			d.model = l.Model
			for _, s := range l.MCPServers {
				if s.Name == cli.WorkflowServer && (s.Status == "failed" || s.Status == "needs-auth") {
					d.workflowDown = true
				}
			}
		}
	case "stream_event":
		if l.Event != nil {
			d.streamed = true
			return d.event(l.Event)
		}
	case "assistant":
		// An API error comes as a made-up assistant message; the result
		// line carries it too, and it is not the model's text.
		if l.Message != nil && !l.IsAPIErrorMessage && l.Message.Model != "<synthetic>" {
			return d.assistant(l.Message)
		}
	case "user":
		if l.Message != nil {
			return d.results(l.Message)
		}
	case "result":
		d.result(&l)
	}
	return nil
}

func (d *decoder) event(e *streamEvent) []agent.Outcome {
	switch e.Type {
	case "message_start":
		d.inMsg, d.msgStart, d.msgModel, d.msgUsage = true, time.Now(), d.model, usage{}
		if e.Message != nil {
			d.msgModel = cmpOr(e.Message.Model, d.model)
			if e.Message.Usage != nil {
				d.msgUsage = *e.Message.Usage
			}
		}
	case "content_block_delta":
		if e.Delta == nil {
			return nil
		}
		switch e.Delta.Type {
		case "text_delta":
			if e.Delta.Text != "" {
				return []agent.Outcome{agent.Text{Text: e.Delta.Text}}
			}
		case "thinking_delta":
			if e.Delta.Thinking != "" {
				return []agent.Outcome{agent.Reasoning{Text: e.Delta.Thinking}}
			}
		}
	case "message_delta":
		if u := e.Usage; u != nil {
			// message_delta's counts are cumulative; input counts only
			// when the API sends them again.
			d.msgUsage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 {
				d.msgUsage.InputTokens = u.InputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				d.msgUsage.CacheCreationInputTokens = u.CacheCreationInputTokens
			}
			if u.CacheReadInputTokens > 0 {
				d.msgUsage.CacheReadInputTokens = u.CacheReadInputTokens
			}
		}
	case "message_stop":
		if !d.inMsg {
			return nil
		}
		d.inMsg = false
		u := d.msgUsage.llm()
		d.total.Add(u)
		return []agent.Outcome{agent.ModelCall{Model: d.msgModel, Usage: u, Duration: time.Since(d.msgStart)}}
	}
	return nil
}

// assistant reads a whole response (or, with partial messages, one block
// of it): its tool calls, and its text when nothing was streamed.
func (d *decoder) assistant(m *message) []agent.Outcome {
	var blocks []block
	if json.Unmarshal(m.Content, &blocks) != nil {
		return nil
	}
	var out []agent.Outcome
	var text strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
			if !d.streamed && b.Text != "" {
				out = append(out, agent.Text{Text: b.Text})
			}
		case "thinking":
			if !d.streamed && b.Thinking != "" {
				out = append(out, agent.Reasoning{Text: b.Thinking})
			}
		case "tool_use":
			d.calls[b.ID] = call{name: b.Name, args: string(b.Input), start: time.Now()}
		}
	}
	if text.Len() > 0 {
		d.lastText = text.String()
	}
	if !d.streamed && m.Usage != nil {
		// Without partial messages each response's usage comes with it.
		u := m.Usage.llm()
		d.total.Add(u)
		out = append(out, agent.ModelCall{Model: cmpOr(m.Model, d.model), Usage: u})
	}
	return out
}

// results reads the tool results Claude Code sends back to the model.
func (d *decoder) results(m *message) []agent.Outcome {
	var blocks []block
	if json.Unmarshal(m.Content, &blocks) != nil {
		return nil
	}
	var out []agent.Outcome
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		c, ok := d.calls[b.ToolUseID]
		if !ok {
			continue
		}
		delete(d.calls, b.ToolUseID)
		if strings.HasPrefix(c.name, workflowPrefix) {
			continue
		}
		out = append(out, agent.ToolUsed{Tool: c.name, Args: c.args, Result: resultText(b.Content), IsError: b.IsError,
			Duration: time.Since(c.start)})
	}
	return out
}

// resultText is a tool result's content: a string, or its text blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}

func (d *decoder) result(l *line) {
	d.gotResult = true
	if l.Result != nil {
		d.res.Text = *l.Result
	}
	d.res.CostUSD = l.TotalCostUSD
	if l.Usage != nil {
		d.res.Usage = l.Usage.llm()
	} else {
		d.res.Usage = d.total
	}
	if !l.IsError && !strings.HasPrefix(l.Subtype, "error") {
		return
	}
	msg := strings.TrimSpace(d.res.Text)
	if msg == "" {
		msg = errorsText(l.Errors)
	}
	if msg == "" {
		msg = l.Subtype
	}
	if l.APIErrorStatus != nil && *l.APIErrorStatus > 0 {
		s := *l.APIErrorStatus
		d.res.Err = &llm.Error{Provider: Type, Model: d.model, Status: s, Retry: s == 429 || s == 408 || s >= 500,
			Message: msg}
		d.res.Text = ""
		return
	}
	if l.Subtype != "" && l.Subtype != "success" && msg != l.Subtype {
		msg = l.Subtype + ": " + msg
	}
	d.res.Err = errors.New("claude: " + msg)
	if l.Subtype != "success" {
		d.res.Text = ""
	}
}

// errorsText joins a result's errors (a list of strings in error results).
func errorsText(raw json.RawMessage) string {
	var l []string
	if json.Unmarshal(raw, &l) == nil {
		return strings.Join(l, "; ")
	}
	return ""
}

// End implements cli.Decoder.
func (d *decoder) End() cli.Result {
	res := d.res
	if !d.gotResult {
		// Stopped before its result (after its action's grace, or
		// cancelled): what was streamed is what it did.
		res.Usage, res.Text = d.total, d.lastText
	}
	if res.Err == nil && d.workflowDown {
		// The turn cannot end with an action: say why, rather than that
		// none came.
		res.Err = errors.New("claude: massgen's workflow tools (MCP server " + cli.WorkflowServer + ") did not connect")
	}
	return res
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
