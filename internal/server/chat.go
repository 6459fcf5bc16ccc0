package server

import (
	"net/http"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// chatFormat writes Chat Completions (POST /v1/chat/completions): a
// chat.completion, or its chunks as the run happens (sseStream).
type chatFormat struct {
	includeUsage bool // stream_options.include_usage
	// hold keeps the answer back until the run has ended: an answer in a
	// format the client asked for is checked first (schema.go).
	hold bool
}

func (f chatFormat) complete(w http.ResponseWriter, res *RunResult, info *massgenInfo, model string, start time.Time, _ []event.Event) {
	msg := responseMessage{Role: "assistant"}
	finish := "stop"
	if res.Final != "" || len(res.ToolCalls) == 0 {
		msg.Content = &res.Final
	}
	if len(res.ToolCalls) > 0 {
		msg.ToolCalls, finish = wireCalls(res.ToolCalls, false), "tool_calls"
	}
	writeJSON(w, http.StatusOK, completion{
		ID: "chatcmpl-" + info.RunID, Object: "chat.completion", Created: start.Unix(), Model: model,
		Choices: []completionChoice{{Message: msg, FinishReason: finish}},
		Usage:   usageOf(res.Usage),
		Massgen: info,
	})
}

// replays is false: a chat.completion has no progress to rebuild.
func (chatFormat) replays() bool { return false }

func (f chatFormat) stream(w http.ResponseWriter, id, model string, start time.Time, timeout time.Duration, gone func()) runStream {
	s := newSSEStream(w, id, model, start.Unix(), timeout, gone)
	s.includeUsage, s.hold = f.includeUsage, f.hold
	return s
}
