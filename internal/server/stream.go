package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// sseStream writes one run as Server-Sent Events in the shape of OpenAI's
// streamed chat completions, while the run happens:
//
//   - a role chunk as soon as the run has started;
//   - coordination progress, one line per step, as delta.reasoning_content,
//     until the answer starts (a UI shows reasoning after the answer as a
//     second reasoning block; the finishing chunk's massgen object sums
//     the run up);
//   - the winner's final presentation as delta.content, token by token;
//   - when the run ends: the part of the final answer the deltas missed
//     (they may be dropped under back-pressure), the client tool calls if
//     any, the finishing chunk (with the `massgen` extension object), a
//     usage chunk if the client asked for one, and `data: [DONE]`;
//   - or, when the run fails or times out, an `error` object and [DONE].
//
// Events arrive from the runner's observer goroutine and the ending from
// the handler goroutine; a mutex orders them. A write that fails or stalls
// beyond the write timeout marks the client gone and cancels the run.
type sseStream struct {
	mu    sync.Mutex
	out   sseWriter
	head  chunk // id, object, created, model
	runID string
	// includeUsage adds a usage chunk at the end (stream_options.include_usage).
	includeUsage bool
	// hold sends the answer only once the run has ended and it has been
	// checked (a format the client asked for): no delta of a presentation
	// that may not conform, nor a Markdown fence the check takes off.
	hold bool
	// ticks thins a running tool's progress to a few lines.
	ticks event.TickThrottle
	// view is the run's view (nil when the runner shares none): the run's
	// last progress line sums the run up from it.
	view *event.View

	// cur is the content streamed since the latest presentation started;
	// sentAny says whether any content was sent at all (an orchestration
	// restart presents again, after a blank line).
	cur        strings.Builder
	sentAny    bool
	pendingSep bool
}

func newSSEStream(w http.ResponseWriter, id, model string, created int64, timeout time.Duration, gone func()) *sseStream {
	return &sseStream{
		out:  newSSEWriter(w, timeout, gone),
		head: chunk{ID: "chatcmpl-" + id, Object: "chat.completion.chunk", Created: created, Model: model}, runID: id,
	}
}

// abandon ends the stream before it started, so that the caller can send
// a plain HTTP error instead; it reports false if the stream had started.
func (s *sseStream) abandon() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.abandon()
}

// start sends the headers and the role chunk, once.
func (s *sseStream) start(view *event.View) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.view = view
	s.startLocked()
}

func (s *sseStream) startLocked() {
	if !s.out.begin() {
		return
	}
	empty := ""
	s.sendLocked(delta{Role: "assistant", Content: &empty}, nil, nil, nil)
}

// observe handles one event of the run.
func (s *sseStream) observe(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.ended {
		return
	}
	s.startLocked()
	// Progress goes out only before the answer (a note on the final
	// answer before its text): clients show reasoning that follows content
	// as a second reasoning block, after the answer.
	if p := progress(s.view, e); p != "" && !s.sentAny && s.ticks.Show(e) {
		s.sendLocked(delta{ReasoningContent: p}, nil, nil, nil)
	}
	if s.hold {
		return // finish sends the checked answer
	}
	switch e := e.(type) {
	case event.FinalStarted:
		s.cur.Reset()
		s.pendingSep = s.sentAny
	case event.FinalDelta:
		s.contentLocked(e.Text)
	case event.FinalAnswer:
		s.reconcileLocked(e.Text)
	}
}

func (s *sseStream) contentLocked(text string) {
	if text == "" {
		return
	}
	s.cur.WriteString(text)
	if s.pendingSep {
		text, s.pendingSep = "\n\n"+text, false
	}
	s.sentAny = true
	s.sendLocked(delta{Content: &text}, nil, nil, nil)
}

// reconcileLocked makes the streamed content of this presentation equal
// to final: it sends what the deltas missed, or, if what was streamed is
// not a prefix of final (the presentation failed and the stored answer was
// used), a blank line and the whole final text.
func (s *sseStream) reconcileLocked(final string) {
	cur := s.cur.String()
	switch {
	case final == "" || cur == final:
	case strings.HasPrefix(final, cur):
		s.contentLocked(final[len(cur):])
	default:
		s.cur.Reset()
		s.pendingSep = s.sentAny
		s.contentLocked(final)
	}
}

// finish ends a completed run: the rest of the answer, tool calls, the
// finishing chunk, usage, [DONE].
func (s *sseStream) finish(res *RunResult, info *massgenInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.ended {
		return
	}
	s.startLocked()
	s.reconcileLocked(res.Final)
	finish := "stop"
	if len(res.ToolCalls) > 0 {
		finish = "tool_calls"
		s.sendLocked(delta{ToolCalls: wireCalls(res.ToolCalls, true)}, nil, nil, nil)
	}
	s.sendLocked(delta{}, &finish, nil, info)
	if s.includeUsage {
		u := usageOf(res.Usage)
		s.sendLocked(delta{}, nil, &u, nil)
	}
	s.doneLocked()
}

// fail ends a run that failed, timed out or was stopped: a progress line,
// an `error` object (which OpenAI's SDKs raise as an error), [DONE].
func (s *sseStream) fail(e *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.ended {
		return
	}
	s.startLocked()
	if !s.sentAny {
		s.sendLocked(delta{ReasoningContent: "[massgen] run ended without an answer: " + e.Error() + "\n"}, nil, nil, nil)
	}
	b, _ := json.Marshal(errorBody{Error: e.object()})
	s.out.send("", b)
	s.doneLocked()
}

func (s *sseStream) doneLocked() {
	s.out.send("", []byte("[DONE]"))
	s.out.end()
}

func (s *sseStream) sendLocked(d delta, finish *string, u *wireUsage, info *massgenInfo) {
	c := s.head
	if u == nil {
		c.Choices = []chunkChoice{{Delta: d, FinishReason: finish}}
	} else {
		c.Choices, c.Usage = []chunkChoice{}, u
	}
	c.Massgen = info
	b, err := json.Marshal(c)
	if err != nil { // cannot happen with these types
		return
	}
	s.out.send("", b)
}

// sseWriter writes Server-Sent Events to one client. Each event is
// flushed at once, bounded by the write timeout; a write that fails or
// stalls marks the client gone (gone cancels the run) and later writes are
// dropped. Its callers serialise the calls.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	gone    func()
	broken  bool
	buf     bytes.Buffer

	started bool // the headers went out (begin)
	ended   bool // the stream is over (end, or abandon before it began)
}

// newSSEWriter writes to w; a nil w writes nothing (a stream that only
// builds its result).
func newSSEWriter(w http.ResponseWriter, timeout time.Duration, gone func()) sseWriter {
	x := sseWriter{w: w, timeout: timeout, gone: gone}
	if w != nil {
		x.rc = http.NewResponseController(w)
	}
	return x
}

// begin sends the status and the headers of an event stream, once; it
// reports whether this call sent them.
func (x *sseWriter) begin() bool {
	if x.started {
		return false
	}
	x.started = true
	if x.w == nil {
		return true
	}
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell reverse proxies not to buffer
	x.w.WriteHeader(http.StatusOK)
	return true
}

// abandon ends the stream before it began, so that the caller can send a
// plain HTTP error instead; it reports false if the stream had begun.
func (x *sseWriter) abandon() bool {
	if x.started {
		return false
	}
	x.ended = true
	return true
}

// send writes one event: an `event:` line when name is set, then data.
func (x *sseWriter) send(name string, data []byte) {
	x.buf.Reset()
	if name != "" {
		x.buf.WriteString("event: ")
		x.buf.WriteString(name)
		x.buf.WriteByte('\n')
	}
	x.buf.WriteString("data: ")
	x.buf.Write(data)
	x.buf.WriteString("\n\n")
	x.flush()
}

func (x *sseWriter) flush() {
	if x.broken || x.w == nil {
		return
	}
	if x.timeout > 0 {
		if err := x.rc.SetWriteDeadline(time.Now().Add(x.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			x.breakOff()
			return
		}
	}
	if _, err := x.w.Write(x.buf.Bytes()); err != nil {
		x.breakOff()
		return
	}
	if err := x.rc.Flush(); err != nil {
		x.breakOff()
	}
}

func (x *sseWriter) breakOff() {
	x.broken = true
	if x.gone != nil {
		x.gone()
	}
}

// end marks the stream over and clears the write deadline: a later
// response on this keep-alive connection must not inherit the deadline of
// the last event.
func (x *sseWriter) end() {
	x.ended = true
	if x.w != nil {
		_ = x.rc.SetWriteDeadline(time.Time{})
	}
}

// progress is the reasoning_content line for a coordination event, or ""
// for events that are not shown (deltas, a turn's usage, and a final
// answer given by presentation: its text is the content itself). The
// words are event.Describe's, as in the CLI and massgen.log; with the
// run's view, the run's end is summed up from it (winner, tally, answers,
// usage), as the CLI's last line is.
func progress(v *event.View, e event.Event) string {
	if slices.Contains(event.Bookkeeping, e.Type()) {
		return ""
	}
	if f, ok := e.(event.FinalAnswer); ok && (f.Reason == "" || f.Reason == "presentation") {
		return ""
	}
	line := v.Describe(e)
	if line == "" {
		return ""
	}
	if a := event.AgentOf(e); a != "" && strings.HasPrefix(line, a) {
		line = "[" + a + "]" + line[len(a):]
	} else {
		line = "[massgen] " + line
	}
	return line + "\n"
}

// clip shortens s to at most n bytes on a rune boundary, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
