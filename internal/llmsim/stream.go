package llmsim

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// exchange carries one request from its plan to the last byte. It is used by
// one goroutine (the handler) only.
type exchange struct {
	s      *Server
	ctx    context.Context
	w      http.ResponseWriter
	rc     *http.ResponseController
	id     int
	req    *chatRequest
	p      *plan
	prompt int

	timer   *time.Timer // reused by every wait of this exchange
	genT0   time.Time   // when the first token went out; pacing is measured from it
	batch   int         // tokens per SSE event
	limit   int         // stop (cut) after this many tokens; -1 = no limit
	tokens  int         // completion tokens written so far
	firstAt time.Time   // zero until the first chunk is written
	head    []byte      // `data: {"id":...,"system_fingerprint":"fp_llmsim",` of every chunk
	buf     []byte      // reused delta buffer
	ev      []byte      // reused event buffer: no allocation per token
	settled bool        // the record already says completed (see settle)
}

// settle records the exchange as completed just before its last bytes go
// out. A client that has read the whole response can then rely on the
// request log saying so: recording after the write would race with it.
func (x *exchange) settle() {
	x.settled = true
	end := time.Now()
	x.s.log.update(x.id, func(r *Record) {
		r.End, r.Outcome, r.OutputTokens = end, OutcomeCompleted, x.tokens
	})
}

// sleep waits d, or until the client or the server gives up.
func (x *exchange) sleep(d time.Duration) error {
	if d <= 0 {
		if x.ctx.Err() != nil {
			return errCancelled
		}
		return nil
	}
	if x.timer == nil {
		x.timer = time.NewTimer(d)
	} else {
		x.timer.Reset(d) // safe without draining since Go 1.23
	}
	select {
	case <-x.timer.C:
		return nil
	case <-x.ctx.Done():
		x.timer.Stop()
		return errCancelled
	}
}

// pace waits until token number k (1-based) is due: the first token goes
// out right after TTFT, then one every 1/tps seconds. Deadlines are computed
// from genT0 rather than from the last write, so slow writes do not add up.
func (x *exchange) pace(k int) error {
	if x.p.tps <= 0 {
		return x.sleep(0)
	}
	due := x.genT0.Add(time.Duration(float64(k-1) / x.p.tps * float64(time.Second)))
	return x.sleep(time.Until(due))
}

func (x *exchange) flush() error {
	if err := x.rc.Flush(); err != nil {
		return errCancelled
	}
	return nil
}

func (x *exchange) markFirstByte() {
	if x.firstAt.IsZero() {
		x.firstAt = time.Now()
		at := x.firstAt
		x.s.log.update(x.id, func(r *Record) { r.FirstByte = at })
	}
}

// batchSize keeps a fast stream cheap: real providers send one token per
// event, which the simulator imitates at modest rates; at high or unlimited
// rates it groups tokens so that a stream has at most ~100 events a second
// (unlimited: 16 tokens, ~64 characters, per event; still several events for
// any answer, so clients' delta assembly is exercised).
func batchSize(tps float64) int {
	if tps <= 0 {
		return 16
	}
	return max(1, int(math.Ceil(tps/100)))
}

// stream answers with server-sent events shaped like OpenAI's (see the
// recordings in reference/provider-recordings/TestOpenAICommon): a role
// chunk, content fragments, then per tool call a header chunk (index, id,
// type, name, empty arguments) and argument fragments, a finish_reason
// chunk, a usage chunk with empty choices when stream_options.include_usage
// is set, and data: [DONE].
//
// The HTTP headers go out at once, the role chunk only after TTFT together
// with the first token: a client's "time to first token" is then the time to
// the first chunk, and an SDK call that returns on headers is not held up.
func (x *exchange) stream() error {
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Request-Id", "req_sim"+strconv.Itoa(x.id))
	x.w.WriteHeader(http.StatusOK)
	if x.p.ttft > 0 { // with no TTFT the headers go out with the role chunk: one write fewer
		if err := x.flush(); err != nil {
			return err
		}
		if err := x.sleep(x.p.ttft); err != nil {
			return err
		}
	}

	x.head = appendHead(make([]byte, 0, 160), x.id, x.req.Model)
	x.buf = make([]byte, 0, 256)
	x.ev = make([]byte, 0, 512)
	x.batch = batchSize(x.p.tps)
	x.limit = -1
	if x.p.transport == faultCut {
		x.limit = max(x.p.tokens()/2, 1)
	}
	role := `{"role":"assistant","content":"","refusal":null}`
	if x.p.text == "" && len(x.p.calls) > 0 {
		role = `{"role":"assistant","content":null}` // what OpenAI sends before tool calls
	}
	if err := x.event(role, "null"); err != nil {
		return err
	}
	if err := x.flush(); err != nil {
		return err
	}
	x.markFirstByte()
	if x.p.transport == faultHang {
		return hang(x.ctx)
	}
	x.genT0 = time.Now()

	if err := x.emitTokens(x.p.text, -1); err != nil {
		return err
	}
	for i, c := range x.p.calls {
		if x.limit >= 0 && x.tokens >= x.limit {
			return errCut
		}
		if err := x.pace(x.tokens + 1); err != nil {
			return err
		}
		x.buf = append(x.buf[:0], `{"tool_calls":[{"index":`...)
		x.buf = strconv.AppendInt(x.buf, int64(i), 10)
		x.buf = append(x.buf, `,"id":"`...)
		x.buf = append(x.buf, callID(x.id, i)...)
		x.buf = append(x.buf, `","type":"function","function":{"name":"`...)
		x.buf = appendEscaped(x.buf, c.name)
		x.buf = append(x.buf, `","arguments":""}}]}`...)
		if err := x.writeEvent(1); err != nil {
			return err
		}
		if err := x.emitTokens(c.args, i); err != nil {
			return err
		}
	}
	if x.p.transport == faultCut {
		return errCut
	}

	if err := x.event("{}", `"`+x.p.finishReason()+`"`); err != nil {
		return err
	}
	x.settle()
	if x.req.includeUsage() {
		u, _ := json.Marshal(newUsage(x.prompt, x.tokens))
		b := append(x.ev[:0], x.head...)
		b = append(b, `"choices":[],"usage":`...)
		b = append(b, u...)
		b = append(b, "}\n\n"...)
		x.ev = b
		if _, err := x.w.Write(b); err != nil {
			return errCancelled
		}
	}
	if _, err := x.w.Write([]byte("data: [DONE]\n\n")); err != nil {
		return errCancelled
	}
	return x.flush()
}

// emitTokens streams s as content (call < 0) or as the argument text of tool
// call number call, a batch of tokens per event.
func (x *exchange) emitTokens(s string, call int) error {
	for i := 0; i < len(s); {
		j, n := i, 0
		for j < len(s) && n < x.batch && (x.limit < 0 || x.tokens+n < x.limit) {
			j = nextToken(s, j)
			n++
		}
		if n == 0 {
			return errCut
		}
		if err := x.pace(x.tokens + n); err != nil {
			return err
		}
		if call < 0 {
			x.buf = append(x.buf[:0], `{"content":"`...)
			x.buf = appendEscaped(x.buf, s[i:j])
			x.buf = append(x.buf, `"}`...)
		} else {
			x.buf = append(x.buf[:0], `{"tool_calls":[{"index":`...)
			x.buf = strconv.AppendInt(x.buf, int64(call), 10)
			x.buf = append(x.buf, `,"function":{"arguments":"`...)
			x.buf = appendEscaped(x.buf, s[i:j])
			x.buf = append(x.buf, `"}}]}`...)
		}
		if err := x.writeEvent(n); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// writeEvent wraps the delta in x.buf into a chunk, writes it and counts its
// n tokens as sent. Paced streams flush every event; unpaced ones leave it
// to net/http's buffer and flush at the end.
func (x *exchange) writeEvent(n int) error {
	x.ev = wrap(x.ev[:0], x.head, x.buf, "null")
	if _, err := x.w.Write(x.ev); err != nil {
		return errCancelled
	}
	x.tokens += n
	if x.p.tps > 0 {
		return x.flush()
	}
	return nil
}

// event writes a chunk with a literal delta and finish_reason.
func (x *exchange) event(delta, finish string) error {
	x.ev = wrap(x.ev[:0], x.head, delta, finish)
	if _, err := x.w.Write(x.ev); err != nil {
		return errCancelled
	}
	return nil
}

// wrap makes a chunk (an SSE event) of a delta.
func wrap[D string | []byte](b, head []byte, delta D, finish string) []byte {
	b = append(b, head...)
	b = append(b, `"choices":[{"index":0,"delta":`...)
	b = append(b, delta...)
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	b = append(b, finish...)
	return append(b, "}],\"usage\":null}\n\n"...)
}

func appendHead(b []byte, id int, model string) []byte {
	b = append(b, `data: {"id":"`...)
	b = append(b, completionID(id)...)
	b = append(b, `","object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = append(b, `,"model":"`...)
	b = appendEscaped(b, model)
	return append(b, `","service_tier":"default","system_fingerprint":"fp_llmsim",`...)
}

// complete answers a non-streaming request: one chat.completion after the
// time the whole generation would take (TTFT plus the tokens at the rate).
func (x *exchange) complete() error {
	total := x.p.tokens()
	if err := x.sleep(x.p.ttft); err != nil {
		return err
	}
	if x.p.transport == faultHang {
		return hang(x.ctx)
	}
	if x.p.tps > 0 && total > 1 {
		if err := x.sleep(time.Duration(float64(total-1) / x.p.tps * float64(time.Second))); err != nil {
			return err
		}
	}
	msg := completionMessage{Role: "assistant", Annotations: []struct{}{}}
	if x.p.text != "" || len(x.p.calls) == 0 {
		msg.Content = &x.p.text
	}
	for i, c := range x.p.calls {
		tc := wireToolCall{ID: callID(x.id, i), Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.name, c.args
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	body, _ := json.Marshal(completion{
		ID: completionID(x.id), Object: "chat.completion", Created: time.Now().Unix(), Model: x.req.Model,
		Choices:     []completionChoice{{Message: msg, FinishReason: x.p.finishReason()}},
		Usage:       newUsage(x.prompt, total),
		ServiceTier: "default", SystemFingerprint: "fp_llmsim",
	})
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Request-Id", "req_sim"+strconv.Itoa(x.id))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	x.w.WriteHeader(http.StatusOK)
	if x.p.transport == faultCut {
		// Promise the whole body, deliver half: the client sees an unexpected EOF.
		_, _ = x.w.Write(body[:len(body)/2])
		x.markFirstByte()
		x.tokens = total / 2
		return errCut
	}
	x.tokens = total
	x.markFirstByte()
	x.settle()
	if _, err := x.w.Write(body); err != nil {
		return errCancelled
	}
	return nil
}

// nextToken returns the end of the simulated token starting at i: leading
// spaces (as in OpenAI's " word" tokens) plus up to four characters, never
// splitting a UTF-8 sequence. It always advances.
func nextToken(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	for n := 0; i < len(s) && n < 4; n++ {
		if s[i] == ' ' && n > 0 {
			break
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
	}
	return i
}

func countTokens(s string) int {
	n := 0
	for i := 0; i < len(s); i = nextToken(s, i) {
		n++
	}
	return n
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends s as the inside of a JSON string. Hand-written so
// that streaming a token costs no allocation; invalid UTF-8 becomes U+FFFD
// as encoding/json would make it.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
