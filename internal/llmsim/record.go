package llmsim

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Record is one request as the simulator saw and answered it. A record is
// added when the request arrives and updated when its first byte is sent and
// when it ends, so tests can wait for a request that is still in flight.
type Record struct {
	ID           int
	Wire         string // the wire format: WireChat, WireResponses, WireAnthropic or WireGemini
	Model        string
	Stream       bool
	Tools        []string  // tool names offered
	VoteEnum     []string  // enum of the vote tool's agent_id, if offered
	Messages     []Message // role + content (+ tool_call_id) as received, in Chat Completions terms (see Message)
	Step         string    // what the simulator decided: "answer", "vote", "text", "submit", "restart", "calls", "fault:429", "fault:cut", ...; "invalid_request" for a rejected body
	Start        time.Time
	FirstByte    time.Time // zero if none sent
	End          time.Time // zero while in flight
	Outcome      string    // "" while in flight, then "completed" | "cancelled" | "fault" | "rejected"
	OutputTokens int       // completion tokens actually sent before the end or cancellation
	PromptTokens int
	// Problem says why the simulator refused a well-formed request: a tool
	// result that a step's expect_results did not find (Outcome "rejected").
	Problem string
	// JSONSchema is set when the request asked for JSON output with a
	// schema (Chat Completions response_format json_schema); the reply was
	// an instance of it.
	JSONSchema bool
}

// Outcomes.
const (
	OutcomeCompleted = "completed" // the response was sent in full (including semantic faults like malformed_tool_json)
	OutcomeCancelled = "cancelled" // the client went away, or the server closed, before the response finished
	OutcomeFault     = "fault"     // the scenario failed the exchange: an error status or a cut stream
	OutcomeRejected  = "rejected"  // the request body was invalid (400 from the simulator itself)
)

// Message is one message of a recorded request, whatever its wire format,
// in Chat Completions terms: a system prompt (instructions, system,
// systemInstruction) is a "system" message first; Gemini's "model" role is
// "assistant"; an assistant turn's tool calls (function_call items, tool_use
// blocks, functionCall parts) are its ToolCalls; each tool result
// (function_call_output, tool_result, functionResponse) is a "tool" message
// whose ToolCallID is the call's ID (for Gemini, the call's id or, without
// one, the function name).
type Message struct {
	Role, Content, ToolCallID string
	ToolCalls                 []string // names of the tool calls of an assistant message
}

// requestLog is the server's append-only log. Waiters are woken by closing a
// channel that exists only while someone waits, so a busy server with no
// waiters allocates nothing per change.
type requestLog struct {
	mu      sync.Mutex
	recs    []Record
	changed chan struct{}
	// keep > 0 bounds the log to about the last keep records (between keep
	// and 2×keep); dropped counts the records let go, so IDs stay unique.
	keep, dropped int
}

func (l *requestLog) notifyLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// add appends r, assigning its ID (1-based, in arrival order).
func (l *requestLog) add(r Record) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keep > 0 && len(l.recs) >= 2*l.keep {
		n := len(l.recs) - l.keep
		l.recs = slices.Clone(l.recs[n:])
		l.dropped += n
	}
	r.ID = l.dropped + len(l.recs) + 1
	l.recs = append(l.recs, r)
	l.notifyLocked()
	return r.ID
}

// update changes record id, unless the log has already let it go.
func (l *requestLog) update(id int, f func(*Record)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := id - 1 - l.dropped; i >= 0 {
		f(&l.recs[i])
		l.notifyLocked()
	}
}

func (l *requestLog) snapshot() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// Requests returns a copy of the request log, in arrival order (only the
// latest records once KeepRequests has bounded it). The slices
// inside the records (Tools, Messages, ...) are shared and must not be
// modified.
func (s *Server) Requests() []Record { return s.log.snapshot() }

// WaitFor blocks until pred holds on the request log or ctx is done. pred is
// evaluated at once and again after every change to the log (a request
// arriving, sending its first byte, ending), always on a fresh copy.
func (s *Server) WaitFor(ctx context.Context, pred func([]Record) bool) error {
	l := &s.log
	for {
		l.mu.Lock()
		snap := slices.Clone(l.recs)
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		if pred(snap) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
