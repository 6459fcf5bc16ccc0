package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// responsesStream writes one run as the event stream of the Responses API,
// while the run happens:
//
//   - response.created and response.in_progress as soon as the run starts;
//   - coordination progress, one line per step, as the summary text of a
//     reasoning item (clients show it as thinking, or ignore it);
//   - the winner's final presentation as a message item's output_text,
//     token by token;
//   - when the run ends: what the deltas missed, one function_call item per
//     client tool call, and response.completed with the whole output, the
//     usage and the `massgen` extension object;
//   - or, when the run fails, response.failed and an `error` event (which
//     OpenAI's SDKs raise as an error).
//
// Progress and answer may alternate (an orchestration restart presents
// again): each switch closes the item in progress and opens the next, so
// output items follow one another as the OpenAI API sends them. Like
// sseStream, it takes events from the runner's observer goroutine and the
// ending from the handler goroutine, under one mutex.
type responsesStream struct {
	mu      sync.Mutex
	out     sseWriter
	id      string // run id
	model   string
	created time.Time

	in    *responsesInput    // the request, echoed in the Response
	keep  *responseStore     // where the Response's conversation is kept
	hold  bool               // the answer goes out at the end, once checked (sseStream.hold)
	ticks event.TickThrottle // thins a running tool's progress to a few lines

	seq   int   // sequence_number of the next event
	items []any // finished output items
	open  *openItem
	// cur is the answer text of the latest presentation, whether its item
	// is still open or not, to reconcile it with the final answer.
	cur strings.Builder
}

// openItem is the output item being streamed.
type openItem struct {
	kind  string // "reasoning" or "message"
	id    string
	index int
	text  strings.Builder
}

// newResponsesStream returns the stream of one run; with a nil w it
// writes nothing, and only builds the output items (a whole Response is
// built so, to be the same as the stream's).
func newResponsesStream(w http.ResponseWriter, id, model string, start time.Time, timeout time.Duration, gone func(),
	in *responsesInput, keep *responseStore) *responsesStream {
	return &responsesStream{out: newSSEWriter(w, timeout, gone), id: id, model: model, created: start, in: in, keep: keep}
}

func (s *responsesStream) abandon() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.abandon()
}

// start sends the opening events, once. The Responses stream needs no
// view: response.completed carries the run's summary in its massgen object.
func (s *responsesStream) start(*event.View) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startLocked()
}

func (s *responsesStream) startLocked() {
	if !s.out.begin() {
		return
	}
	r := newResponse(s.id, s.model, s.created, "in_progress", nil, nil, nil, s.in)
	s.send("response.created", map[string]any{"response": r})
	s.send("response.in_progress", map[string]any{"response": r})
}

func (s *responsesStream) observe(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.ended {
		return
	}
	s.startLocked()
	p := progress(nil, e)
	if !s.ticks.Show(e) {
		p = ""
	}
	if e.Type() == event.TypeRunFinished {
		p = "" // response.completed says so
	}
	if s.hold {
		if _, ok := e.(event.FinalAnswer); ok {
			p = "" // a note on the answer goes with it at the end, if at all
		}
		if p != "" {
			s.progressLocked(p)
		}
		return
	}
	switch e := e.(type) {
	case event.FinalStarted:
		// A new presentation: its text goes to a new message item.
		if s.open != nil && s.open.kind == "message" {
			s.closeLocked()
		}
		s.cur.Reset()
	case event.FinalDelta:
		s.textLocked(e.Text)
	case event.FinalAnswer:
		if s.open != nil && s.open.kind == "message" && strings.HasPrefix(e.Text, s.cur.String()) {
			s.reconcileLocked(e.Text) // complete the message being streamed
			break
		}
		// A note on the final answer ("the winning answer is the final
		// answer…") goes before the message that carries it, not in a
		// reasoning item after it.
		if p != "" {
			s.progressLocked(p)
			p = ""
		}
		s.reconcileLocked(e.Text)
	}
	if p != "" {
		s.progressLocked(p)
	}
}

func (s *responsesStream) progressLocked(line string) {
	if s.open != nil && s.open.kind != "reasoning" {
		s.closeLocked()
	}
	if s.open == nil {
		s.openLocked("reasoning", fmt.Sprintf("rs_%s_%d", s.id, len(s.items)))
		s.send("response.output_item.added", map[string]any{"output_index": s.open.index,
			"item": reasoning{ID: s.open.id, Type: "reasoning", Summary: []summaryText{}}})
		s.send("response.reasoning_summary_part.added", map[string]any{"item_id": s.open.id, "output_index": s.open.index,
			"summary_index": 0, "part": summaryText{Type: "summary_text"}})
	}
	s.open.text.WriteString(line)
	s.send("response.reasoning_summary_text.delta", map[string]any{"item_id": s.open.id, "output_index": s.open.index,
		"summary_index": 0, "delta": line})
}

func (s *responsesStream) textLocked(text string) {
	if text == "" {
		return
	}
	if s.open != nil && s.open.kind != "message" {
		s.closeLocked()
	}
	if s.open == nil {
		s.openLocked("message", fmt.Sprintf("msg_%s_%d", s.id, len(s.items)))
		s.send("response.output_item.added", map[string]any{"output_index": s.open.index,
			"item": messageItem(s.open.id, "in_progress", "")})
		s.send("response.content_part.added", map[string]any{"item_id": s.open.id, "output_index": s.open.index,
			"content_index": 0, "part": outputText{Type: "output_text", Annotations: []any{}}})
	}
	s.open.text.WriteString(text)
	s.cur.WriteString(text)
	s.send("response.output_text.delta", map[string]any{"item_id": s.open.id, "output_index": s.open.index,
		"content_index": 0, "delta": text, "logprobs": []any{}})
}

// reconcileLocked makes the latest presentation's text equal to final: it
// sends what the deltas missed or, when what was streamed is not a prefix
// of final (the presentation failed and the stored answer was used), the
// whole final text in a new message item.
func (s *responsesStream) reconcileLocked(final string) {
	cur := s.cur.String()
	switch {
	case final == "" || cur == final:
	case s.open != nil && s.open.kind == "message" && strings.HasPrefix(final, cur):
		s.textLocked(final[len(cur):])
	default:
		s.closeLocked()
		s.cur.Reset()
		s.textLocked(final)
	}
}

func (s *responsesStream) openLocked(kind, id string) {
	s.open = &openItem{kind: kind, id: id, index: len(s.items)}
}

// closeLocked finishes the open item, if any.
func (s *responsesStream) closeLocked() {
	it := s.open
	if it == nil {
		return
	}
	s.open = nil
	text := it.text.String()
	var done any
	switch it.kind {
	case "reasoning":
		part := summaryText{Type: "summary_text", Text: text}
		s.send("response.reasoning_summary_text.done", map[string]any{"item_id": it.id, "output_index": it.index,
			"summary_index": 0, "text": text})
		s.send("response.reasoning_summary_part.done", map[string]any{"item_id": it.id, "output_index": it.index,
			"summary_index": 0, "part": part})
		done = reasoning{ID: it.id, Type: "reasoning", Summary: []summaryText{part}}
	default:
		part := outputText{Type: "output_text", Text: text, Annotations: []any{}}
		s.send("response.output_text.done", map[string]any{"item_id": it.id, "output_index": it.index,
			"content_index": 0, "text": text, "logprobs": []any{}})
		s.send("response.content_part.done", map[string]any{"item_id": it.id, "output_index": it.index,
			"content_index": 0, "part": part})
		done = messageItem(it.id, "completed", text)
	}
	s.send("response.output_item.done", map[string]any{"output_index": it.index, "item": done})
	s.items = append(s.items, done)
}

func (s *responsesStream) finish(res *RunResult, info *massgenInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.ended {
		return
	}
	r, e := s.finishLocked(res, info)
	if e != nil {
		s.failLocked(e, "")
		return
	}
	s.send("response.completed", map[string]any{"response": r})
	s.out.end()
}

// finishLocked completes the output items (the rest of the answer, the
// client tool calls), keeps the conversation, and returns the completed
// Response, or the error that the conversation could not be kept.
func (s *responsesStream) finishLocked(res *RunResult, info *massgenInfo) (response, *Error) {
	s.startLocked()
	s.reconcileLocked(res.Final)
	s.closeLocked()
	for i, c := range res.ToolCalls {
		item := functionCallItem(s.id, i, c.ID, c.Name, "", "in_progress")
		index := len(s.items)
		s.send("response.output_item.added", map[string]any{"output_index": index, "item": item})
		s.send("response.function_call_arguments.delta", map[string]any{"item_id": item.ID, "output_index": index, "delta": c.Arguments})
		s.send("response.function_call_arguments.done", map[string]any{"item_id": item.ID, "output_index": index, "arguments": c.Arguments})
		item.Status, item.Arguments = "completed", c.Arguments
		s.send("response.output_item.done", map[string]any{"output_index": index, "item": item})
		s.items = append(s.items, item)
	}
	r := newResponse(s.id, s.model, s.created, "completed", s.items, usagePtr(res), info, s.in)
	return r, responsesFormat{in: s.in, keep: s.keep}.keepOutput(r)
}

func (s *responsesStream) fail(e *Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.ended {
		return
	}
	s.failLocked(e, "[massgen] run ended without an answer: "+e.Error()+"\n")
}

// failLocked ends the stream with response.failed and an error event,
// after a progress note unless note is "".
func (s *responsesStream) failLocked(e *Error, note string) {
	s.startLocked()
	if note != "" {
		s.progressLocked(note)
	}
	s.closeLocked()
	obj := e.object()
	r := newResponse(s.id, s.model, s.created, "failed", s.items, nil, nil, s.in)
	r.Error = &obj
	s.send("response.failed", map[string]any{"response": r})
	// The members of the API's error event, plus an `error` object, which
	// is what makes OpenAI's SDKs raise it.
	s.send("error", map[string]any{"code": obj.Code, "message": obj.Message, "param": obj.Param, "error": obj})
	s.out.end()
}

// send writes one event: its type, its fields, its sequence number.
func (s *responsesStream) send(typ string, fields map[string]any) {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	b, err := json.Marshal(fields)
	if err != nil { // cannot happen with these types
		return
	}
	s.out.send(typ, b)
}
