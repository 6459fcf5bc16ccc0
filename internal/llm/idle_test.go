package llm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/anthropic"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llm/gemini"
	"github.com/massgen/massgen/internal/llm/llmtest"
	"github.com/massgen/massgen/internal/llm/openai"
)

var hi = &llm.Request{Model: "slow-model", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

// hangingServer answers by calling start (which flushes what it sends),
// then sends nothing more until
// the client goes away or the test ends.
func hangingServer(t *testing.T, start func(w http.ResponseWriter)) (url string, requests *atomic.Int64) {
	requests = &atomic.Int64{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		start(w)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() {
		close(release) // before Close, which waits for the handlers
		srv.Close()
		llm.HTTPClient.CloseIdleConnections()
	})
	return srv.URL, requests
}

func sseHeaders(w http.ResponseWriter) { w.Header().Set("Content-Type", "text/event-stream") }

func TestAHungProviderFailsTheRequestAfterTheIdleTimeout(t *testing.T) {
	const idle = 200 * time.Millisecond
	tests := []struct {
		name       string
		start      func(w http.ResponseWriter)
		wantChunks []llm.Chunk
		where      string
	}{
		{"no headers", func(http.ResponseWriter) {}, nil, "waiting for the response headers"},
		{"headers, then nothing", func(w http.ResponseWriter) {
			sseHeaders(w)
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}, nil, "mid-response"},
		{"stops mid-stream", func(w http.ResponseWriter) {
			sseHeaders(w)
			fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"half an ans"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
		}, []llm.Chunk{{Kind: llm.ChunkText, Text: "half an ans"}}, "mid-response"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := hangingServer(t, tc.start)
			m := chatcompat.New(chatcompat.Options{Provider: "vllm", BaseURL: url, APIKey: "k", Model: "slow-model", Stream: true})
			// Retries do not multiply the wait: a stall is final.
			m = llm.WithRetry(llm.WithIdleTimeout(m, idle), llm.RetryPolicy{BaseDelay: time.Millisecond})
			chunks, err := llmtest.Collect(m.Stream(t.Context(), hi))
			e := llmtest.RequireLLMError(t, err)
			stall, ok := errors.AsType[*llm.StallError](err)
			if !ok || stall.Idle != idle {
				t.Fatalf("err = %v; want a *StallError for %v", err, idle)
			}
			for _, want := range []string{"vllm", "slow-model", "no bytes for 0.2 s", tc.where, "stream_idle_timeout_seconds"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if e.IsRetryable() || requests.Load() != 1 {
				t.Errorf("retryable=%v after %d requests; want one request, not retried", e.IsRetryable(), requests.Load())
			}
			if fmt.Sprint(chunks) != fmt.Sprint(tc.wantChunks) {
				t.Errorf("chunks = %v, want %v", chunks, tc.wantChunks)
			}
		})
	}
}

func TestEveryWireReportsAStall(t *testing.T) {
	// The watch is below the SDKs, so each adapter sees only a broken
	// exchange; the error must still say it was a stall.
	wires := map[string]func(url string) llm.Model{
		"responses": func(url string) llm.Model {
			return openai.New(openai.Options{Provider: "openai", BaseURL: url, APIKey: "k", Model: "slow-model"})
		},
		"anthropic": func(url string) llm.Model {
			return anthropic.New(anthropic.Options{Provider: "claude", BaseURL: url, APIKey: "k", Model: "slow-model"})
		},
		"gemini": func(url string) llm.Model {
			return gemini.New(gemini.Options{Provider: "gemini", BaseURL: url, APIKey: "k", Model: "slow-model"})
		},
	}
	for name, build := range wires {
		t.Run(name, func(t *testing.T) {
			url, _ := hangingServer(t, func(w http.ResponseWriter) {
				sseHeaders(w)
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
			})
			m := llm.WithIdleTimeout(build(url), 200*time.Millisecond)
			_, err := llmtest.Collect(m.Stream(t.Context(), hi))
			if _, ok := errors.AsType[*llm.StallError](err); !ok || !strings.Contains(err.Error(), "slow-model") {
				t.Fatalf("err = %v; want a stall naming the model", err)
			}
		})
	}
}

func TestTheIdleTimeoutDoesNotApplyBeforeAWholeResponse(t *testing.T) {
	// A non-streaming request's headers come with the whole answer.
	synctest.Test(t, func(t *testing.T) {
		rt := roundTrip(func(req *http.Request) (*http.Response, error) {
			select {
			case <-time.After(10 * time.Second):
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
			body := `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}`
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
		})
		m := chatcompat.New(chatcompat.Options{BaseURL: "http://llm.test/v1", Model: "m", Stream: false,
			HTTPClient: &http.Client{Transport: llm.WatchTransport(rt)}})
		chunks, err := llmtest.Collect(llm.WithIdleTimeout(m, time.Second).Stream(t.Context(), hi))
		if err != nil || len(chunks) == 0 || chunks[0].Text != "done" {
			t.Fatalf("chunks=%v err=%v; want the whole answer after 10s of thinking", chunks, err)
		}
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// trickle is a response body that sends data one byte per interval, then
// blocks for stall (if any) before the rest, honouring ctx.
type trickle struct {
	ctx      context.Context
	data     []byte
	interval time.Duration
	stallAt  int // index before which it stalls; -1: never
	stall    time.Duration
	reading  chan<- int // told the index of each read, if set
}

func (b *trickle) Read(p []byte) (int, error) {
	if len(b.data) == 0 {
		return 0, io.EOF
	}
	wait := b.interval
	if b.stallAt == 0 {
		wait = b.stall
	}
	if b.reading != nil {
		b.reading <- b.stallAt
	}
	select {
	case <-time.After(wait):
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	}
	b.stallAt--
	p[0], b.data = b.data[0], b.data[1:]
	return 1, nil
}

func (b *trickle) Close() error { return nil }

// toolCallStream is an SSE stream whose whole content is one new_answer
// tool call with long arguments: the adapter yields no chunk before its end.
func toolCallStream(answer string) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"+
		"[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"new_answer\",\"arguments\":%q}}]}}]}\n\n",
		fmt.Sprintf(`{"content":%q}`, answer))
	buf.WriteString(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n")
	buf.WriteString("data: [DONE]\n\n")
	return buf.Bytes()
}

func trickleModel(body func(ctx context.Context) *trickle) llm.Model {
	rt := roundTrip(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: body(req.Context()), Request: req}, nil
	})
	return chatcompat.New(chatcompat.Options{Provider: "vllm", BaseURL: "http://llm.test/v1", Model: "m", Stream: true,
		HTTPClient: &http.Client{Transport: llm.WatchTransport(rt)}})
}

func TestBytesFlowingKeepALongToolCallAlive(t *testing.T) {
	// The answer takes many idle timeouts to arrive and no chunk comes out
	// before its end, but a byte arrives every half timeout: not a stall.
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Second
		answer := strings.Repeat("a long answer ", 20)
		data := toolCallStream(answer)
		m := llm.WithIdleTimeout(trickleModel(func(ctx context.Context) *trickle {
			return &trickle{ctx: ctx, data: data, interval: idle / 2, stallAt: -1}
		}), idle)
		start := time.Now()
		chunks, err := llmtest.Collect(m.Stream(t.Context(), hi))
		if err != nil {
			t.Fatalf("after %v: %v", time.Since(start), err)
		}
		if time.Since(start) < 10*idle {
			t.Fatalf("the stream took %v; the test needs it to outlast many idle timeouts", time.Since(start))
		}
		// The arguments come as one fragment (a ChunkToolArgs), then the
		// call: nothing comes out before the one SSE line is whole.
		i := slices.IndexFunc(chunks, func(c llm.Chunk) bool { return c.Kind == llm.ChunkToolCall })
		if i < 0 || !strings.Contains(chunks[i].ToolCall.Arguments, answer) {
			t.Fatalf("chunks = %v, want the whole tool call", chunks)
		}
	})
}

func TestActivityTellsTheTimeSinceTheLastByte(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		act := llm.NewActivity()
		if _, ok := act.SinceLastByte(); ok {
			t.Fatal("a request in flight before any was made")
		}
		reading := make(chan int)
		m := trickleModel(func(ctx context.Context) *trickle {
			return &trickle{ctx: ctx, data: toolCallStream("x"), interval: time.Millisecond, stallAt: 5, stall: 3 * time.Second, reading: reading}
		})
		done := make(chan error)
		go func() {
			_, err := llmtest.Collect(m.Stream(llm.WithActivity(t.Context(), act), hi))
			done <- err
		}()
		for i := range reading { // until the read that stalls has begun
			if i == 0 {
				break
			}
		}
		go func() {
			for range reading { // the rest of the stream
			}
		}()
		time.Sleep(2 * time.Second)
		if d, ok := act.SinceLastByte(); !ok || d != 2*time.Second {
			t.Errorf("SinceLastByte = %v, %v during a 3s stall entered 2s ago; want 2s, true", d, ok)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		close(reading)
		if _, ok := act.SinceLastByte(); ok {
			t.Error("a request still in flight after the stream ended")
		}
	})
}

func TestIdleTimeoutIsExactInFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := llm.WithIdleTimeout(trickleModel(func(ctx context.Context) *trickle {
			return &trickle{ctx: ctx, data: toolCallStream("x"), interval: time.Millisecond, stallAt: 10, stall: time.Hour}
		}), 5*time.Second)
		start := time.Now()
		_, err := llmtest.Collect(m.Stream(t.Context(), hi))
		if _, ok := errors.AsType[*llm.StallError](err); !ok {
			t.Fatalf("err = %v, want a stall", err)
		}
		// 10 bytes at 1ms, then 5s of silence.
		if got := time.Since(start); got != 5*time.Second+10*time.Millisecond {
			t.Errorf("the stall was detected after %v, want 5.01s", got)
		}
	})
}
