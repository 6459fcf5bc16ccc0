package llmsim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func TestStatusFaults(t *testing.T) {
	f := start(t, scenario(t, `
models:
  m:
    steps:
      - {fault: "429", retry_after: 2}
      - {fault: "500"}
      - {fault: "503", retry_after: 0.25, text: "busy, come back later"}
      - {fault: "429"}
      - {fault: "500"}
  locked:
    always: {fault: "401"}
`))
	ctx := testCtx(t)
	check := func(err error, status int, code, retryAfter string) {
		t.Helper()
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("error %v (%T) is not *openai.Error", err, err)
		}
		if apiErr.StatusCode != status || apiErr.Code != code || apiErr.Message == "" {
			t.Errorf("error = %d %q %q, want %d %q", apiErr.StatusCode, apiErr.Code, apiErr.Message, status, code)
		}
		if got := apiErr.Response.Header.Get("Retry-After"); got != retryAfter {
			t.Errorf("retry-after = %q, want %q", got, retryAfter)
		}
	}
	// Streaming requests get the error status before any event.
	r := runStream(t, ctx, f, params("m", "task", newAnswerTool()))
	check(r.err, 429, "rate_limit_exceeded", "2")
	r = runStream(t, ctx, f, params("m", "task", newAnswerTool()))
	check(r.err, 500, "", "")
	_, err := f.client.Chat.Completions.New(ctx, params("m", "task"))
	check(err, 503, "", "0.25")
	if apiErr := (*openai.Error)(nil); errors.As(err, &apiErr) && apiErr.Message != "busy, come back later" {
		t.Errorf("message = %q", apiErr.Message)
	}
	_, err = f.client.Chat.Completions.New(ctx, params("m", "task"))
	check(err, 429, "rate_limit_exceeded", "")
	_, err = f.client.Chat.Completions.New(ctx, params("m", "task"))
	check(err, 500, "", "")
	for range 2 { // always: never consumed
		r = runStream(t, ctx, f, params("locked", "task"))
		check(r.err, 401, "invalid_api_key", "")
	}
	recs := f.sim.Requests()
	wantSteps := []string{"fault:429", "fault:500", "fault:503", "fault:429", "fault:500", "fault:401", "fault:401"}
	for i, rec := range recs {
		if rec.Step != wantSteps[i] || rec.Outcome != OutcomeFault || rec.OutputTokens != 0 {
			t.Errorf("record %d = %+v", i, rec)
		}
	}
}

func TestCutStream(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {steps: [{fault: cut}, {fault: cut}]}}`))
	ctx := testCtx(t)
	r := runStream(t, ctx, f, params("m", "task", newAnswerTool()))
	finished := false
	for _, c := range r.chunks {
		if len(c.Choices) > 0 && c.Choices[0].FinishReason != "" {
			finished = true
		}
	}
	// The connection drops inside the chunked body: the SDK reports it.
	if r.err == nil || finished {
		t.Fatalf("cut stream: err %v, finish_reason seen %v", r.err, finished)
	}
	if len(r.chunks) < 2 {
		t.Errorf("only %d chunks before the cut", len(r.chunks))
	}
	args := r.message().ToolCalls[0].Function.Arguments
	if json.Valid([]byte(args)) {
		t.Errorf("arguments complete despite the cut: %s", args)
	}
	rec := lastRecord(t, f)
	if rec.Step != "fault:cut" || rec.Outcome != OutcomeFault || rec.OutputTokens == 0 {
		t.Errorf("record = %+v", rec)
	}
	// Non-streaming: half a JSON body, then the connection drops.
	if _, err := f.client.Chat.Completions.New(ctx, params("m", "task", newAnswerTool())); err == nil {
		t.Error("non-streaming cut returned no error")
	}
}

func TestMalformedToolJSON(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {steps: [{fault: malformed_tool_json}, {fault: malformed_tool_json}]}}`))
	ctx := testCtx(t)
	r := runStream(t, ctx, f, params("m", "task", newAnswerTool()))
	if r.err != nil {
		t.Fatal(r.err)
	}
	calls := r.message().ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "new_answer" || json.Valid([]byte(calls[0].Function.Arguments)) {
		t.Fatalf("tool calls = %+v", calls)
	}
	if !strings.HasPrefix(calls[0].Function.Arguments, `{"content":"[sim model m] Answer 1`) {
		t.Errorf("arguments = %s", calls[0].Function.Arguments)
	}
	if rec := lastRecord(t, f); rec.Step != "fault:malformed_tool_json" || rec.Outcome != OutcomeCompleted {
		t.Errorf("record = %+v", rec)
	}
	res, err := f.client.Chat.Completions.New(ctx, params("m", "task", newAnswerTool()))
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Choices[0].Message.ToolCalls[0].Function.Arguments; json.Valid([]byte(a)) {
		t.Errorf("non-streaming arguments valid: %s", a)
	}
}

func TestNoToolCall(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {steps: [{fault: no_tool_call}, {fault: no_tool_call, text: "I refuse."}]}}`))
	ctx := testCtx(t)
	r := runStream(t, ctx, f, params("m", "task", newAnswerTool(), voteTool("agent1")))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if m := r.message(); len(m.ToolCalls) != 0 || !strings.HasPrefix(m.Content, "[sim model m] I will answer in plain text") || r.acc.Choices[0].FinishReason != "stop" {
		t.Errorf("message = %+v, finish %q", m, r.acc.Choices[0].FinishReason)
	}
	r = runStream(t, ctx, f, params("m", "task", newAnswerTool()))
	if m := r.message(); m.Content != "I refuse." || len(m.ToolCalls) != 0 {
		t.Errorf("message = %+v", m)
	}
	if rec := lastRecord(t, f); rec.Step != "fault:no_tool_call" || rec.Outcome != OutcomeCompleted {
		t.Errorf("record = %+v", rec)
	}
}

func TestHangUntilClientCancels(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {always: {fault: hang}}}`))
	for _, stream := range []bool{true, false} {
		n := len(f.sim.Requests())
		ctx, cancel := context.WithCancel(testCtx(t))
		done := make(chan error, 1)
		go func() {
			if stream {
				r := runStream(t, ctx, f, params("m", "task", newAnswerTool()))
				done <- r.err
			} else {
				_, err := f.client.Chat.Completions.New(ctx, params("m", "task", newAnswerTool()))
				done <- err
			}
		}()
		wctx := testCtx(t)
		err := f.sim.WaitFor(wctx, func(rs []Record) bool {
			// Streaming hangs after the role chunk; non-streaming before any byte.
			return len(rs) > n && (!stream || !rs[n].FirstByte.IsZero())
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // hanging, not finishing
		select {
		case err := <-done:
			t.Fatalf("hang ended on its own: %v", err)
		default:
		}
		cancelAt := time.Now()
		cancel()
		if err := <-done; err == nil {
			t.Errorf("stream=%v: no error after cancel", stream)
		}
		if err := f.sim.WaitFor(wctx, func(rs []Record) bool { return rs[n].Outcome != "" }); err != nil {
			t.Fatal(err)
		}
		rec := f.sim.Requests()[n]
		if rec.Outcome != OutcomeCancelled || rec.Step != "fault:hang" {
			t.Errorf("record = %+v", rec)
		}
		if d := rec.End.Sub(cancelAt); d > 100*time.Millisecond {
			t.Errorf("stream=%v: server saw the cancel after %v", stream, d)
		}
	}
}

func TestCloseAbortsInFlight(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {always: {fault: hang}}, slow: {ttft_ms: 60000}}`))
	ctx := testCtx(t)
	done := make(chan error, 2)
	go func() { done <- runStream(t, ctx, f, params("m", "task")).err }()
	go func() { _, err := f.client.Chat.Completions.New(ctx, params("slow", "task")); done <- err }()
	if err := f.sim.WaitFor(ctx, func(rs []Record) bool { return len(rs) == 2 }); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := f.sim.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	for range 2 {
		if err := <-done; err == nil {
			t.Error("client got no error from an aborted exchange")
		}
	}
	for _, rec := range f.sim.Requests() {
		if rec.Outcome != OutcomeCancelled {
			t.Errorf("record = %+v", rec)
		}
	}
	// After Close nothing is served.
	if _, err := f.sim.Start("127.0.0.1:0"); err == nil {
		t.Error("Start after Close succeeded")
	}
	resp, err := f.hc.Get(f.base + "/models")
	if err == nil {
		resp.Body.Close()
		t.Errorf("request after Close answered %s", resp.Status)
	}
}

func TestRetryAfterHeaderForSDKRetries(t *testing.T) {
	// With retries on, the SDK honours retry-after-ms: the second attempt
	// lands on the next step and succeeds.
	f := start(t, scenario(t, `models: {m: {steps: [{fault: "429", retry_after: 0.05}, {answer: "ok"}]}}`))
	res, err := f.client.Chat.Completions.New(testCtx(t), params("m", "task", newAnswerTool()), option.WithMaxRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Choices[0].Message.ToolCalls[0].Function.Arguments; a != `{"content":"ok"}` {
		t.Errorf("arguments = %s", a)
	}
	recs := f.sim.Requests()
	if len(recs) != 2 || recs[1].Start.Sub(recs[0].End) < 40*time.Millisecond {
		t.Errorf("retry not delayed by retry-after: %+v", recs)
	}
}

func TestStatusFaultHonoursStepTTFT(t *testing.T) {
	f := start(t, scenario(t, `models: {m: {steps: [{fault: "500", ttft_ms: 100}]}}`))
	t0 := time.Now()
	_, err := f.client.Chat.Completions.New(testCtx(t), params("m", "task"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(t0); d < 100*time.Millisecond {
		t.Errorf("error after %v, want >= 100ms", d)
	}
}
