package geminicli

import (
	"encoding/json"
	"errors"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/llm"
)

// event is one line of `--output-format stream-json` (Gemini CLI's
// JsonStreamEvent: init, message, tool_use, tool_result, error, result).
type event struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	// init
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	// message
	Role    string `json:"role"`
	Content string `json:"content"`
	Delta   bool   `json:"delta"`
	// tool_use
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	// tool_result, result
	Status string `json:"status"`
	Output string `json:"output"`
	Error  *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	// error
	Severity string `json:"severity"`
	Message  string `json:"message"`
	// result
	Stats *stats `json:"stats"`
}

type tokens struct {
	Total  int64 `json:"total_tokens"`
	Input  int64 `json:"input_tokens"`
	Output int64 `json:"output_tokens"`
	Cached int64 `json:"cached"`
}

// usage converts the CLI's counts to massgen's: its total also holds the
// thinking (and tool-use prompt) tokens that input and output leave out,
// counted here as reasoning, within the output, as the Gemini adapter
// counts thoughtsTokenCount.
func (t tokens) usage() llm.Usage {
	rest := max(t.Total-t.Input-t.Output, 0)
	return llm.Usage{InputTokens: t.Input, OutputTokens: t.Output + rest, ReasoningTokens: rest, CachedTokens: t.Cached}
}

type stats struct {
	tokens
	DurationMS int64             `json:"duration_ms"`
	ToolCalls  int               `json:"tool_calls"`
	Models     map[string]tokens `json:"models"`
}

type toolUse struct {
	name string
	args string
	at   time.Time
}

// decoder reads one task's stream.
type decoder struct {
	session, model string
	tools          map[string]toolUse
	text           strings.Builder // the last model response's text
	afterTool      bool            // a tool result came since the last text
	res            cli.Result
	done           bool   // the result event came
	lastError      string // the last error event's message
}

func (d *decoder) Line(line []byte) []agent.Outcome {
	var e event
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	switch e.Type {
	case "init":
		d.session, d.model = e.SessionID, e.Model
	case "message":
		if e.Role != "assistant" || e.Content == "" {
			return nil
		}
		if d.afterTool {
			d.text.Reset()
			d.afterTool = false
		}
		d.text.WriteString(e.Content)
		return []agent.Outcome{agent.Text{Text: e.Content}}
	case "tool_use":
		d.tools[e.ToolID] = toolUse{name: e.ToolName, args: string(e.Parameters), at: e.Timestamp}
	case "tool_result":
		d.afterTool = true
		use, ok := d.tools[e.ToolID]
		delete(d.tools, e.ToolID)
		if !ok || isWorkflowTool(use.name) {
			return nil
		}
		u := agent.ToolUsed{Tool: use.name, Args: use.args, Result: e.Output, IsError: e.Status == "error"}
		if e.Error != nil && e.Error.Message != "" {
			u.Result = strings.TrimSpace(e.Output + "\n" + e.Error.Message)
		}
		if !use.at.IsZero() && e.Timestamp.After(use.at) {
			u.Duration = e.Timestamp.Sub(use.at)
		}
		return []agent.Outcome{u}
	case "error":
		if e.Message != "" {
			d.lastError = e.Message
		}
	case "result":
		return d.result(e)
	}
	return nil
}

// result ends the stream: the task's usage, one ModelCall per model.
func (d *decoder) result(e event) []agent.Outcome {
	d.done = true
	var out []agent.Outcome
	if e.Stats != nil {
		d.res.Usage = e.Stats.usage()
		models := make([]string, 0, len(e.Stats.Models))
		for m := range e.Stats.Models {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			call := agent.ModelCall{Model: m, Usage: e.Stats.Models[m].usage()}
			if len(models) == 1 {
				call.Duration = time.Duration(e.Stats.DurationMS) * time.Millisecond
			}
			if call.Usage == (llm.Usage{}) {
				continue // a model the CLI named but never got an answer from
			}
			out = append(out, call)
		}
	}
	if e.Status == "error" {
		msg := d.lastError
		if e.Error != nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		d.res.Err = d.apiError(cmpOr(msg, "Gemini CLI ended with an error"))
	}
	return out
}

func (d *decoder) End() cli.Result {
	r := d.res
	r.Session = d.session
	r.Text = strings.TrimSpace(d.text.String())
	if !d.done && r.Err == nil && d.lastError != "" {
		r.Err = errors.New("gemini: " + d.lastError)
	}
	return r
}

// isWorkflowTool: massgen's workflow tools, as the CLI names MCP tools
// (mcp_<server>_<tool>).
func isWorkflowTool(name string) bool {
	return strings.HasPrefix(name, "mcp_"+cli.WorkflowServer+"_")
}

// googleStatuses are google.rpc.Code names and their HTTP statuses.
var googleStatuses = map[string]int{
	"INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 400, "OUT_OF_RANGE": 400,
	"UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403, "NOT_FOUND": 404,
	"ABORTED": 409, "ALREADY_EXISTS": 409, "RESOURCE_EXHAUSTED": 429, "CANCELLED": 499,
	"INTERNAL": 500, "UNKNOWN": 500, "DATA_LOSS": 500, "UNIMPLEMENTED": 501,
	"UNAVAILABLE": 503, "DEADLINE_EXCEEDED": 504,
}

var statusName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(Status: ([A-Z_]+)\)`) })

// apiError reads the provider's error the CLI quotes ("[API Error: …]":
// the API's JSON body, or its message and status name) as an *llm.Error
// with its HTTP status, so the failure has its kind (auth, quota, …);
// other errors stay plain.
func (d *decoder) apiError(msg string) error {
	status := 0
	text := msg
	if i, j := strings.IndexByte(msg, '{'), strings.LastIndexByte(msg, '}'); i >= 0 && j > i {
		var body struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(msg[i:j+1]), &body) == nil && (body.Error.Code != 0 || body.Error.Status != "") {
			status = body.Error.Code
			if status == 0 {
				status = googleStatuses[body.Error.Status]
			}
			text = cmpOr(body.Error.Message, msg)
		}
	}
	if status == 0 {
		if m := statusName().FindStringSubmatch(msg); m != nil {
			status = googleStatuses[m[1]]
		}
	}
	if status == 0 && strings.HasPrefix(msg, "[API Error") {
		// The CLI quotes some errors by their message alone: its quota
		// errors (it adds "Please wait and try again later…" to a 429's)
		// and a refused key.
		lower := strings.ToLower(msg)
		switch {
		case strings.Contains(lower, "api key not valid"), strings.Contains(lower, "api_key_invalid"):
			status = 401
		case strings.Contains(lower, "exceeded your current quota"), strings.Contains(lower, "resource_exhausted"),
			strings.Contains(lower, "please wait and try again later"), strings.Contains(lower, "rate limit"):
			status = 429
		}
	}
	if status == 0 && strings.HasPrefix(msg, "[API Error") {
		return &llm.Error{Provider: Type, Model: d.model, Message: msg}
	}
	if status == 0 {
		return errors.New("gemini: " + msg)
	}
	return &llm.Error{Provider: Type, Model: d.model, Status: status, Message: text,
		Retry: status == 429 || status >= 500}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
