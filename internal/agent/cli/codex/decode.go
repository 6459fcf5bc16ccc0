package codex

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/llm"
)

// event is one line of `codex exec --json`: thread.started, turn.started,
// item.started / item.updated / item.completed, turn.completed,
// turn.failed, error.
type event struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Item     *item  `json:"item"`
	Usage    *usage `json:"usage"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

// item is a thread item; which fields are set depends on its type.
type item struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	// agent_message, reasoning
	Text string `json:"text"`
	// command_execution
	Command          string `json:"command"`
	AggregatedOutput string `json:"aggregated_output"`
	ExitCode         *int   `json:"exit_code"`
	Status           string `json:"status"`
	// file_change
	Changes json.RawMessage `json:"changes"`
	// mcp_tool_call
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    *struct {
		Content           []struct{ Type, Text string } `json:"content"`
		StructuredContent json.RawMessage               `json:"structured_content"`
	} `json:"result"`
	ItemError *struct {
		Message string `json:"message"`
	} `json:"error"`
	// web_search
	Query string `json:"query"`
	// error (a warning: the run goes on)
	Message string `json:"message"`
}

type usage struct {
	InputTokens           int64 `json:"input_tokens"`
	CachedInputTokens     int64 `json:"cached_input_tokens"`
	CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
	OutputTokens          int64 `json:"output_tokens"`
	ReasoningOutputTokens int64 `json:"reasoning_output_tokens"`
}

// decoder turns the events into outcomes. Codex reports usage per turn
// (every model request of the turn summed), not per request: each
// turn.completed is one ModelCall.
type decoder struct {
	res     cli.Result
	started map[string]time.Time // item id → when it started
	turn    time.Time
	texts   []string
	// turnUsage sums turn.completed's usage: the task's, unless the
	// session file recorded more (a turn cut short reports none).
	turnUsage llm.Usage
	// lastErr is the last error event: Codex reports the attempts it
	// retries with them, so one is the task's error only if no turn
	// completes after it.
	lastErr   string
	completed bool
	// offline counts the consecutive attempts that could not reach the
	// provider at all; Codex would go on waiting "for network" until the
	// turn's deadline.
	offline int
	stop    bool
	// roll reads the per-response usage from the session file (when
	// Prepare made the decoder, knowing CODEX_HOME).
	roll *rollout
}

// maxOffline is how many consecutive attempts that cannot connect to the
// provider end a task (Codex waits about 3, 8 and 13 s before them, so
// about 25 s; an API agent's retries take as long).
var maxOffline = 3

func (d *decoder) Line(line []byte) []agent.Outcome {
	var ev event
	if json.Unmarshal(line, &ev) != nil {
		return nil // not an event (a warning printed on stdout)
	}
	if d.roll == nil {
		return d.event(&ev)
	}
	calls := d.roll.read() // the responses recorded before this event
	return append(calls, d.event(&ev)...)
}

func (d *decoder) event(ev *event) []agent.Outcome {
	switch ev.Type {
	case "thread.started":
		d.res.Session = ev.ThreadID
		if d.roll != nil {
			d.roll.thread = ev.ThreadID
		}
	case "turn.started":
		d.turn = time.Now()
	case "item.started":
		if ev.Item != nil {
			if d.started == nil {
				d.started = map[string]time.Time{}
			}
			d.started[ev.Item.ID] = time.Now()
		}
	case "item.completed":
		d.offline = 0
		if ev.Item != nil {
			return d.item(ev.Item)
		}
	case "turn.completed":
		d.completed, d.lastErr, d.offline = true, "", 0
		if d.roll != nil && d.roll.n > 0 {
			// The session file gave each response's ModelCall; the turn's
			// sum is the task's usage.
			if u := ev.Usage; u != nil {
				d.turnUsage.Add(u.llm())
			}
			return nil
		}
		mc := agent.ModelCall{}
		if !d.turn.IsZero() {
			mc.Duration = time.Since(d.turn)
		}
		if u := ev.Usage; u != nil {
			mc.Usage = u.llm()
			d.turnUsage.Add(mc.Usage)
		}
		return []agent.Outcome{mc}
	case "turn.failed":
		msg := ev.Message
		if ev.Error != nil {
			msg = ev.Error.Message
		}
		d.res.Err = providerError(msg)
		if msg == d.lastErr {
			return nil // its error event was the failed model call
		}
		mc := agent.ModelCall{Failure: agent.FailureOf(d.res.Err, "", Type, "")}
		if !d.turn.IsZero() {
			mc.Duration = time.Since(d.turn)
		}
		return []agent.Outcome{mc}
	case "error":
		// An attempt that failed and that Codex retries ("Reconnecting...
		// waiting for network"), or the words of a failure a turn.failed
		// then reports: a failed model call either way.
		d.lastErr = ev.Message
		err := providerError(ev.Message)
		if strings.HasPrefix(ev.Message, "Reconnecting") {
			err.Retry = true // Codex tries again
		}
		if strings.Contains(ev.Message, "waiting for network") || strings.Contains(ev.Message, "Connection failed") {
			d.offline++
			if d.offline >= maxOffline && d.res.Err == nil {
				d.res.Err = &llm.Error{Provider: Type, Retry: true,
					Message: fmt.Sprintf("the provider cannot be reached (%d attempts): %s", d.offline, ev.Message)}
				d.stop = true
			}
		}
		return []agent.Outcome{agent.ModelCall{Failure: agent.FailureOf(err, "", Type, "")}}
	}
	return nil
}

// Stop is true once the provider could not be reached maxOffline times in
// a row: Codex would wait on until the turn's deadline.
func (d *decoder) Stop() bool { return d.stop }

// item reports a completed item.
func (d *decoder) item(it *item) []agent.Outcome {
	var dur time.Duration
	if t, ok := d.started[it.ID]; ok {
		dur = time.Since(t)
		delete(d.started, it.ID)
	}
	switch it.Type {
	case "agent_message":
		if it.Text == "" {
			return nil
		}
		d.texts = append(d.texts, it.Text)
		d.res.Text = it.Text
		return []agent.Outcome{agent.Text{Text: it.Text + "\n"}}
	case "reasoning":
		if it.Text == "" {
			return nil
		}
		return []agent.Outcome{agent.Reasoning{Text: it.Text + "\n"}}
	case "command_execution":
		failed := it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
		out := it.AggregatedOutput
		if it.ExitCode != nil && *it.ExitCode != 0 {
			out += "\n(exit code " + strconv.Itoa(*it.ExitCode) + ")"
		}
		return []agent.Outcome{agent.ToolUsed{Tool: "shell", Args: it.Command, Result: out, IsError: failed, Duration: dur}}
	case "file_change":
		return []agent.Outcome{agent.ToolUsed{Tool: "apply_patch", Args: string(it.Changes), Result: it.Status,
			IsError: it.Status == "failed", Duration: dur}}
	case "mcp_tool_call":
		if it.Server == cli.WorkflowServer {
			return nil // the workflow tools are the turn's Propose outcomes
		}
		u := agent.ToolUsed{Tool: "mcp__" + it.Server + "__" + it.Tool, Args: string(it.Arguments), Duration: dur,
			IsError: it.Status == "failed" || it.ItemError != nil}
		switch {
		case it.ItemError != nil:
			u.Result = it.ItemError.Message
		case it.Result != nil:
			var parts []string
			for _, c := range it.Result.Content {
				if c.Text != "" {
					parts = append(parts, c.Text)
				}
			}
			u.Result = strings.Join(parts, "\n")
			if u.Result == "" && len(it.Result.StructuredContent) > 0 && string(it.Result.StructuredContent) != "null" {
				u.Result = string(it.Result.StructuredContent)
			}
		}
		return []agent.Outcome{u}
	case "web_search":
		return []agent.Outcome{agent.ToolUsed{Tool: "web_search", Args: it.Query, Duration: dur}}
	}
	return nil
}

func (d *decoder) End() cli.Result {
	d.res.Usage = d.turnUsage
	if d.roll != nil {
		d.roll.read() // what the CLI recorded after its last event
		if u := d.roll.usage; u.InputTokens+u.OutputTokens > d.res.Usage.InputTokens+d.res.Usage.OutputTokens {
			d.res.Usage = u
		}
	}
	if d.res.Err == nil && !d.completed && d.lastErr != "" {
		d.res.Err = providerError(d.lastErr) // it exited after the error, without a turn.failed
	}
	if d.res.Err == nil && d.res.Text == "" && len(d.texts) > 0 {
		d.res.Text = d.texts[len(d.texts)-1]
	}
	return d.res
}

// statusRe finds the HTTP status in Codex's provider errors ("unexpected
// status 401 Unauthorized: …", "exceeded retry limit, last status: 429 Too
// Many Requests").
var statusRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bstatus:? (\d{3})\b`) })

// providerError is an error Codex reported: with an HTTP status in it, the
// provider's refusal (an *llm.Error, so an auth or quota failure is
// classified as one); otherwise a plain error.
func providerError(msg string) *llm.Error {
	if msg == "" {
		msg = "codex reported an error without a message"
	}
	status := 0
	if m := statusRe().FindStringSubmatch(msg); m != nil {
		status, _ = strconv.Atoi(m[1])
	} else {
		// Codex's own words for refusals whose status it does not print.
		for _, w := range statusWords {
			if strings.Contains(msg, w.text) {
				status = w.status
				break
			}
		}
	}
	return &llm.Error{Provider: Type, Status: status, Message: msg, Retry: status == 429 || status >= 500}
}

// statusWords are the messages Codex 0.171.0 gives some provider refusals
// without their status: an exhausted quota or plan ("Check your plan and
// billing details", "purchase more credits": a quota failure, not a rate
// limit, by internal/agent's rule), a model at capacity.
var statusWords = []struct {
	text   string
	status int
}{
	{"Quota exceeded", 429},
	{"usage limit", 429},
	{"at capacity", 503},
}
