package copilot

import (
	"encoding/json"
	"errors"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/llm"
)

// event is one line of `--output-format json`: a session event
// ({type, data, id, timestamp, ephemeral}) or the closing result.
type event struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	// result
	SessionID string `json:"sessionId"`
	ExitCode  *int   `json:"exitCode"`
}

type delta struct {
	DeltaContent     string `json:"deltaContent"`
	ParentToolCallID string `json:"parentToolCallId"`
}

type message struct {
	Content          string `json:"content"`
	Model            string `json:"model"`
	ParentToolCallID string `json:"parentToolCallId"`
}

type toolStart struct {
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Arguments        json.RawMessage `json:"arguments"`
	MCPServerName    string          `json:"mcpServerName"`
	ParentToolCallID string          `json:"parentToolCallId"`
}

type toolComplete struct {
	ToolCallID string `json:"toolCallId"`
	Success    bool   `json:"success"`
	Result     *struct {
		Content string `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"error"`
}

type sessionError struct {
	ErrorType  string `json:"errorType"`
	ErrorCode  string `json:"errorCode"`
	Message    string `json:"message"`
	StatusCode int    `json:"statusCode"`
}

type callFailure struct {
	Model            string `json:"model"`
	StatusCode       int    `json:"statusCode"`
	DurationMS       int64  `json:"durationMs"`
	ErrorMessage     string `json:"errorMessage"`
	ParentToolCallID string `json:"parentToolCallId"`
}

// usageFile is what --usage-output-file holds (the fields read).
type usageFile struct {
	ModelMetrics map[string]struct {
		Requests struct {
			Count int `json:"count"`
		} `json:"requests"`
		Usage struct {
			InputTokens      int64 `json:"inputTokens"`
			OutputTokens     int64 `json:"outputTokens"`
			CacheReadTokens  int64 `json:"cacheReadTokens"`
			CacheWriteTokens int64 `json:"cacheWriteTokens"`
			ReasoningTokens  int64 `json:"reasoningTokens"`
		} `json:"usage"`
	} `json:"modelMetrics"`
	TotalAPIDurationMS int64 `json:"totalApiDurationMs"`
}

type pending struct {
	name, args, server string
	at                 time.Time
}

// decoder reads one task's stream; usage is the task's usage file ("":
// none).
type decoder struct {
	usage   string
	model   string
	tools   map[string]pending
	text    string // the last top-level assistant message
	res     cli.Result
	errored bool
}

func newDecoder(usage string) *decoder { return &decoder{usage: usage, tools: map[string]pending{}} }

func (d *decoder) Line(line []byte) []agent.Outcome {
	var e event
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	switch e.Type {
	case "assistant.message_delta":
		var x delta
		if json.Unmarshal(e.Data, &x) == nil && x.ParentToolCallID == "" && x.DeltaContent != "" {
			return []agent.Outcome{agent.Text{Text: x.DeltaContent}}
		}
	case "assistant.reasoning_delta":
		var x delta
		if json.Unmarshal(e.Data, &x) == nil && x.ParentToolCallID == "" && x.DeltaContent != "" {
			return []agent.Outcome{agent.Reasoning{Text: x.DeltaContent}}
		}
	case "assistant.message":
		var x message
		if json.Unmarshal(e.Data, &x) == nil && x.ParentToolCallID == "" {
			if x.Model != "" {
				d.model = x.Model
			}
			if strings.TrimSpace(x.Content) != "" {
				d.text = x.Content
			}
		}
	case "tool.execution_start":
		var x toolStart
		if json.Unmarshal(e.Data, &x) == nil && x.ParentToolCallID == "" {
			d.tools[x.ToolCallID] = pending{name: x.ToolName, args: string(x.Arguments), server: x.MCPServerName, at: e.Timestamp}
		}
	case "tool.execution_complete":
		var x toolComplete
		if json.Unmarshal(e.Data, &x) != nil {
			return nil
		}
		p, ok := d.tools[x.ToolCallID]
		delete(d.tools, x.ToolCallID)
		if !ok || p.server == cli.WorkflowServer {
			return nil
		}
		u := agent.ToolUsed{Tool: p.name, Args: p.args, IsError: !x.Success}
		if x.Result != nil {
			u.Result = x.Result.Content
		}
		if x.Error != nil && x.Error.Message != "" {
			u.Result = strings.TrimSpace(u.Result + "\n" + x.Error.Message)
		}
		if !p.at.IsZero() && e.Timestamp.After(p.at) {
			u.Duration = e.Timestamp.Sub(p.at)
		}
		return []agent.Outcome{u}
	case "model.call_failure":
		// A failed request the CLI may retry: a model call of its own,
		// with its failure; the task's error, if any, is session.error.
		var x callFailure
		if json.Unmarshal(e.Data, &x) == nil && x.ParentToolCallID == "" {
			err := &llm.Error{Provider: Type, Model: x.Model, Status: x.StatusCode, Message: x.ErrorMessage,
				Retry: x.StatusCode == 0 || x.StatusCode == 429 || x.StatusCode >= 500}
			return []agent.Outcome{agent.ModelCall{Model: x.Model, Duration: time.Duration(x.DurationMS) * time.Millisecond,
				Failure: agent.FailureOf(err, "", Type, x.Model)}}
		}
	case "session.error":
		var x sessionError
		if json.Unmarshal(e.Data, &x) == nil {
			d.res.Err = d.sessionError(x)
		}
	case "result":
		d.res.Session = e.SessionID
		if e.ExitCode != nil && *e.ExitCode != 0 && d.res.Err == nil {
			d.errored = true
		}
		return d.readUsage()
	}
	return nil
}

// readUsage reads the usage file the CLI wrote before its result: the
// task's usage and a ModelCall per model.
func (d *decoder) readUsage() []agent.Outcome {
	if d.usage == "" {
		return nil
	}
	b, err := os.ReadFile(d.usage)
	if err != nil {
		return nil
	}
	var u usageFile
	if json.Unmarshal(b, &u) != nil {
		return nil
	}
	models := make([]string, 0, len(u.ModelMetrics))
	for m := range u.ModelMetrics {
		models = append(models, m)
	}
	sort.Strings(models)
	var out []agent.Outcome
	d.res.Usage = llm.Usage{}
	for _, m := range models {
		mu := u.ModelMetrics[m].Usage
		usage := llm.Usage{InputTokens: mu.InputTokens, OutputTokens: mu.OutputTokens, ReasoningTokens: mu.ReasoningTokens,
			CachedTokens: mu.CacheReadTokens, CacheWriteTokens: mu.CacheWriteTokens}
		if usage == (llm.Usage{}) {
			continue
		}
		d.res.Usage.Add(usage)
		call := agent.ModelCall{Model: m, Usage: usage}
		if len(models) == 1 {
			call.Duration = time.Duration(u.TotalAPIDurationMS) * time.Millisecond
		}
		out = append(out, call)
	}
	return out
}

func (d *decoder) End() cli.Result {
	r := d.res
	r.Text = strings.TrimSpace(d.text)
	if r.Usage == (llm.Usage{}) {
		d.readUsage() // a CLI that ended without its result line
		r.Usage = d.res.Usage
	}
	if r.Err == nil && d.errored {
		r.Err = errors.New("copilot: the CLI ended with an error")
	}
	return r
}

// errorStatuses are the HTTP statuses of session.error's errorType when
// it gives none.
var errorStatuses = map[string]int{"authentication": 401, "authorization": 403, "quota": 429, "rate_limit": 429}

// sessionError is the error that ended the session, which comes from its
// model provider (a refusal, a limit, an unreachable endpoint): an
// *llm.Error with the provider's status when there is one (and a quota
// error's wording, so it is told from a rate limit).
func (d *decoder) sessionError(x sessionError) error {
	status := x.StatusCode
	if status == 0 {
		status = errorStatuses[x.ErrorType]
	}
	msg := strings.TrimSpace(x.Message)
	if x.ErrorType == "quota" && !strings.Contains(strings.ToLower(msg), "quota") {
		msg = "quota exceeded: " + msg
	}
	return &llm.Error{Provider: Type, Model: d.model, Status: status, Message: msg, Retry: status == 429 && x.ErrorType != "quota" || status >= 500}
}
