package otlp

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
)

// testDeriver is a deriver recording into memory.
func testDeriver(t *testing.T) (*deriver, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	inst, err := newInstruments(mp.Meter(scope))
	if err != nil {
		t.Fatal(err)
	}
	return newDeriver(tp.Tracer(scope), inst, false), rec
}

func feed(d *deriver, t0 time.Time, es ...event.Event) {
	for i, e := range es {
		h := e.Head()
		d.handle(event.Stamped(event.At(e, max(h.Attempt, 1), h.Epoch), uint64(i+1), t0.Add(time.Duration(i)*time.Second)))
	}
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

var team = []event.AgentInfo{{ID: "a", Backend: "claude", Model: "claude-x"}, {ID: "b", Backend: "openai", Model: "gpt-x"}}

// A turn's accounting may come after the agent's next turn started (its
// answer was accepted first), and a failed turn's verdict after its
// accounting: each span still gets its own usage and status.
func TestTurnsMatchTheirEvents(t *testing.T) {
	d, rec := testDeriver(t)
	t0 := time.Unix(1000, 0)
	auth := &coord.Failure{Kind: coord.FailAuth, Status: 401, Message: "bad key"}
	feed(d, t0,
		event.RunStarted{Team: team},
		event.TurnStarted{Agent: "a"},
		event.TurnStarted{Agent: "b"},
		event.AnswerAccepted{Header: event.Header{Epoch: 1}, Agent: "a", Label: "agent1.1", AnonLabel: "agent1"},
		event.TurnStarted{Header: event.Header{Epoch: 1}, Agent: "a"},
		event.TurnEnded{Agent: "a", Usage: event.Usage{InputTokens: 10, OutputTokens: 5}},
		event.TurnEnded{Agent: "b", Usage: event.Usage{InputTokens: 7}},
		event.TurnFailed{Header: event.Header{Epoch: 1}, Agent: "b", Err: "bad key", Failure: auth},
		event.ToolCalled{Header: event.Header{Epoch: 1}, Agent: "a", Tool: "t", Duration: 500 * time.Millisecond},
		event.VoteAccepted{Header: event.Header{Epoch: 1}, Agent: "a", Target: "a", TargetAnswer: "agent1.1"},
		event.TurnEnded{Header: event.Header{Epoch: 1}, Agent: "a", Usage: event.Usage{InputTokens: 20, OutputTokens: 2}},
		event.WinnerSelected{Agent: "a", Label: "agent1.1"},
		event.FinalStarted{Agent: "a", Mode: "presentation"},
		event.FinalAnswer{Agent: "a", Reason: "presentation", Usage: event.Usage{InputTokens: 30, OutputTokens: 9}},
		event.RunFinished{Status: "completed", Winner: "a"},
	)
	spans := rec.Ended()
	if len(spans) != 6 {
		t.Fatalf("%d spans", len(spans))
	}
	byStart := map[time.Duration]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byStart[s.StartTime().Sub(t0)] = s
	}
	type want struct {
		name    string
		in, out int64
		end     time.Duration
		status  codes.Code
		outcome string
	}
	for start, w := range map[time.Duration]want{
		1 * time.Second:  {"invoke_agent a", 10, 5, 5 * time.Second, codes.Unset, "answer"},
		2 * time.Second:  {"invoke_agent b", 7, 0, 6 * time.Second, codes.Error, "failed"},
		4 * time.Second:  {"invoke_agent a", 20, 2, 10 * time.Second, codes.Unset, "vote"},
		12 * time.Second: {"invoke_agent a", 30, 9, 13 * time.Second, codes.Unset, ""},
		0:                {"invoke_agent massgen", 67, 16, 14 * time.Second, codes.Unset, ""},
	} {
		s := byStart[start]
		if s == nil {
			t.Errorf("no span starts at +%s", start)
			continue
		}
		a := attrs(s)
		if s.Name() != w.name || a["gen_ai.usage.input_tokens"].AsInt64() != w.in || a["gen_ai.usage.output_tokens"].AsInt64() != w.out ||
			s.EndTime().Sub(t0) != w.end || s.Status().Code != w.status || a["massgen.turn.outcome"].AsString() != w.outcome {
			t.Errorf("span at +%s: %s in %d out %d end +%s status %v outcome %q; want %+v", start, s.Name(),
				a["gen_ai.usage.input_tokens"].AsInt64(), a["gen_ai.usage.output_tokens"].AsInt64(), s.EndTime().Sub(t0),
				s.Status().Code, a["massgen.turn.outcome"].AsString(), w)
		}
	}
	b := attrs(byStart[2*time.Second])
	if b["error.type"].AsString() != "auth" || b["gen_ai.provider.name"].AsString() != "openai" || b["http.response.status_code"].AsInt64() != 401 {
		t.Errorf("b's failed turn: %v", b)
	}
	tool := byStart[8*time.Second-500*time.Millisecond]
	if tool == nil || tool.Name() != "execute_tool t" || tool.Parent().SpanID() != byStart[4*time.Second].SpanContext().SpanID() ||
		tool.EndTime().Sub(t0) != 8*time.Second {
		t.Errorf("tool span: %v", tool)
	}
	if a := attrs(byStart[1*time.Second]); a["gen_ai.provider.name"].AsString() != "anthropic" || a["gen_ai.request.model"].AsString() != "claude-x" {
		t.Errorf("a's turn: %v", a)
	}
}

// A subscriber the broker cut ends what it has open, in error, and so
// does one whose events stop without run_finished.
func TestCutEndsSpansInError(t *testing.T) {
	for _, cut := range []error{&event.LagError{Queued: 4097, Next: 3, Latest: 4100}, nil} {
		d, rec := testDeriver(t)
		t0 := time.Unix(1000, 0)
		feed(d, t0, event.RunStarted{Team: team}, event.TurnStarted{Agent: "a"}, event.FinalStarted{Agent: "b"})
		d.close(cut, t0.Add(time.Minute))
		d.handle(event.Stamped(event.RunFinished{Status: "completed"}, 9, t0.Add(2*time.Minute))) // ignored
		spans := rec.Ended()
		if len(spans) != 3 {
			t.Fatalf("cut %v: %d spans", cut, len(spans))
		}
		for _, s := range spans {
			if s.Status().Code != codes.Error || s.EndTime() != t0.Add(time.Minute) || attrs(s)["error.type"].AsString() != "massgen.telemetry_incomplete" {
				t.Errorf("cut %v: %s status %v %q end %v", cut, s.Name(), s.Status().Code, s.Status().Description, s.EndTime())
			}
		}
	}
}

// A run that ends in failure marks the run span so.
func TestFailedRun(t *testing.T) {
	d, rec := testDeriver(t)
	feed(d, time.Unix(1000, 0), event.RunStarted{Team: team}, event.RunFinished{Status: "failed", Err: "every agent failed"})
	s := rec.Ended()[0]
	if s.Status().Code != codes.Error || s.Status().Description != "every agent failed" || attrs(s)["error.type"].AsString() != "failed" {
		t.Errorf("run span: %v %q %v", s.Status().Code, s.Status().Description, attrs(s))
	}
}

// Post-evaluation is a span from the final answer to its verdict; content
// is recorded only when asked for.
func TestPostEvaluationAndContent(t *testing.T) {
	for _, content := range []bool{false, true} {
		d, rec := testDeriver(t)
		d.content = content
		t0 := time.Unix(1000, 0)
		feed(d, t0,
			event.RunStarted{Team: team, Question: "why?"},
			event.TurnStarted{Agent: "a"},
			event.AnswerAccepted{Header: event.Header{Epoch: 1}, Agent: "a", Label: "agent1.1", Content: "because"},
			event.TurnEnded{Agent: "a"},
			event.FinalAnswer{Agent: "a", Text: "because.", Reason: "the stored answer stands"},
			event.PostEvaluation{Agent: "a", Verdict: "submit", Usage: event.Usage{InputTokens: 3, OutputTokens: 1}},
			event.RunFinished{Status: "completed", Winner: "a"},
		)
		var post, run, turn sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			switch {
			case attrs(s)["massgen.turn.kind"].AsString() == "post_evaluation":
				post = s
			case s.Name() == "invoke_agent massgen":
				run = s
			default:
				turn = s
			}
		}
		if post == nil || post.StartTime() != t0.Add(4*time.Second) || post.EndTime() != t0.Add(5*time.Second) ||
			attrs(post)["massgen.post_evaluation.verdict"].AsString() != "submit" || attrs(post)["gen_ai.usage.input_tokens"].AsInt64() != 3 {
			t.Fatalf("post-evaluation span: %v", post)
		}
		_, q := attrs(run)["massgen.question"]
		_, f := attrs(run)["massgen.final_answer"]
		a := false
		for _, kv := range turn.Events()[0].Attributes {
			if kv.Key == "massgen.answer.text" {
				a = true
			}
		}
		if q != content || f != content || a != content {
			t.Errorf("content %v: question %v, final answer %v, answer text %v", content, q, f, a)
		}
	}
}
