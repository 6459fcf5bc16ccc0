package llmsim

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"
)

// exchange carries one request from its plan to the last byte. It is used by
// one goroutine (the handler) only. It owns everything that is the same for
// every wire format — timing, pacing, the token limit of a cut, hanging, the
// request log — and leaves the bytes to the wire's encoder.
type exchange struct {
	s   *Server
	ctx context.Context
	w   http.ResponseWriter
	rc  *http.ResponseController
	id  int
	req *request
	p   *plan
	enc encoder

	timer   *time.Timer // reused by every wait of this exchange
	genT0   time.Time   // when the first token went out; pacing is measured from it
	batch   int         // tokens per SSE event
	limit   int         // stop (cut) after this many tokens; -1 = no limit
	tokens  int         // completion tokens written so far
	firstAt time.Time   // zero until the first chunk is written
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

// put writes the events in x.ev, if any.
func (x *exchange) put() error {
	if len(x.ev) == 0 {
		return nil
	}
	if _, err := x.w.Write(x.ev); err != nil {
		return errCancelled
	}
	return nil
}

// putTokens writes the events in x.ev and counts n tokens as sent. Paced
// streams flush every event; unpaced ones leave it to net/http's buffer and
// flush at the end.
func (x *exchange) putTokens(n int) error {
	if err := x.put(); err != nil {
		return err
	}
	x.tokens += n
	if len(x.ev) == 0 {
		return nil
	}
	if x.p.tps > 0 {
		if err := x.flush(); err != nil {
			return err
		}
	}
	x.markFirstByte()
	return nil
}

// stream answers with server-sent events in the wire's shape.
//
// The HTTP headers go out at once, the opening events (role chunk,
// response.created, message_start) only after TTFT together with the first
// token: a client's "time to first token" is then the time to the first
// chunk, and an SDK call that returns on headers is not held up.
func (x *exchange) stream() error {
	x.enc.headers(x, x.w.Header(), true)
	x.w.WriteHeader(http.StatusOK)
	if x.p.ttft > 0 { // with no TTFT the headers go out with the first events: one write fewer
		if err := x.flush(); err != nil {
			return err
		}
		if err := x.sleep(x.p.ttft); err != nil {
			return err
		}
	}

	x.ev = make([]byte, 0, 512)
	x.batch = batchSize(x.p.tps)
	x.limit = -1
	if x.p.transport == faultCut {
		x.limit = max(x.p.tokens()/2, 1)
	}
	x.ev = x.enc.open(x, x.ev[:0])
	if err := x.put(); err != nil {
		return err
	}
	if err := x.flush(); err != nil {
		return err
	}
	if len(x.ev) > 0 {
		x.markFirstByte()
	}
	if x.p.transport == faultHang {
		return hang(x.ctx)
	}
	x.genT0 = time.Now()

	if x.p.text != "" {
		x.ev = x.enc.textStart(x, x.ev[:0])
		if err := x.put(); err != nil {
			return err
		}
		if err := x.emitTokens(x.p.text, -1); err != nil {
			return err
		}
		x.ev = x.enc.textEnd(x, x.ev[:0])
		if err := x.put(); err != nil {
			return err
		}
	}
	for i, c := range x.p.calls {
		if x.limit >= 0 && x.tokens >= x.limit {
			return errCut
		}
		if err := x.pace(x.tokens + 1); err != nil {
			return err
		}
		x.ev = x.enc.callStart(x, x.ev[:0], i)
		if err := x.putTokens(1); err != nil {
			return err
		}
		if err := x.emitTokens(c.args, i); err != nil {
			return err
		}
		x.ev = x.enc.callEnd(x, x.ev[:0], i)
		if err := x.put(); err != nil {
			return err
		}
	}
	if x.p.transport == faultCut {
		return errCut
	}

	x.settle()
	x.ev = x.enc.close(x, x.ev[:0])
	if err := x.put(); err != nil {
		return err
	}
	x.markFirstByte()
	return x.flush()
}

// emitTokens streams s as text (call < 0) or as the argument text of tool
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
		x.ev = x.enc.delta(x, x.ev[:0], call, s[i:j], j == len(s))
		if err := x.putTokens(n); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// complete answers a non-streaming request: the whole response after the
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
	body := x.enc.body(x, total)
	h := x.w.Header()
	x.enc.headers(x, h, false)
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
