package otlp_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/app"
	_ "github.com/massgen/massgen/internal/llm/chatcompat" // backend type sim
	"github.com/massgen/massgen/internal/telemetry/otlp"
)

// receiver is the OpenTelemetry Collector's own OTLP receiver, run in
// this process over HTTP and gRPC, with sinks that keep what it received.
type receiver struct {
	URL     string // OTLP/HTTP
	GRPC    string // OTLP/gRPC, as an endpoint URL (http://host:port)
	traces  *consumertest.TracesSink
	metrics *consumertest.MetricsSink
}

func startReceiver(t *testing.T) *receiver {
	t.Helper()
	// Free ports: the receiver does not report the ones it bound.
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
	addr, grpcAddr := free(), free()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.GRPC.NetAddr.Endpoint = grpcAddr
	cfg.HTTP.ServerConfig.Endpoint = addr
	r := &receiver{URL: "http://" + addr, GRPC: "http://" + grpcAddr, traces: new(consumertest.TracesSink), metrics: new(consumertest.MetricsSink)}
	set := receivertest.NewNopSettings(component.MustNewType("otlp"))
	ctx := context.Background()
	tr, err := f.CreateTraces(ctx, set, cfg, r.traces)
	if err != nil {
		t.Fatal(err)
	}
	mr, err := f.CreateMetrics(ctx, set, cfg, r.metrics)
	if err != nil {
		t.Fatal(err)
	}
	// The two are one shared receiver: started once, stopped once each.
	for _, c := range []component.Component{tr, mr} {
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, c := range []component.Component{tr, mr} {
			if err := c.Shutdown(ctx); err != nil {
				t.Error(err)
			}
		}
	})
	return r
}

// span is a received span, flattened.
type span struct {
	name          string
	id, parent    string
	trace         string
	attrs         map[string]any
	events        []string
	eventAttrs    []map[string]any
	status        ptrace.StatusCode
	statusMessage string
	kind          ptrace.SpanKind
	start, end    pcommon.Timestamp
}

func (r *receiver) spans(t *testing.T) (resource map[string]any, out []span) {
	t.Helper()
	for _, td := range r.traces.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			resource = rs.Resource().Attributes().AsRaw()
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					s := ss.Spans().At(k)
					sp := span{name: s.Name(), id: s.SpanID().String(), parent: s.ParentSpanID().String(), trace: s.TraceID().String(),
						attrs: s.Attributes().AsRaw(), status: s.Status().Code(), statusMessage: s.Status().Message(),
						kind: s.Kind(), start: s.StartTimestamp(), end: s.EndTimestamp()}
					if s.ParentSpanID().IsEmpty() {
						sp.parent = ""
					}
					for e := 0; e < s.Events().Len(); e++ {
						sp.events = append(sp.events, s.Events().At(e).Name())
						sp.eventAttrs = append(sp.eventAttrs, s.Events().At(e).Attributes().AsRaw())
					}
					out = append(out, sp)
				}
			}
		}
	}
	return resource, out
}

// A simulated three-agent run, one agent refused with a 401 and one using
// tools, exported to the collector's OTLP receiver: the spans, their
// structure, attributes and usage, and the metrics, as received.
func TestRunExportsToCollector(t *testing.T) {
	// Cleanups run last registered first: this one after the receiver
	// and the exporters are shut down.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	rcv := startReceiver(t)
	t.Cleanup(func() {
		if err := otlp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	cfg := `agents:
  - id: researcher
    backend:
      type: sim
      model: sim-alpha
      cwd: ws
      scenario:
        models:
          sim-alpha:
            steps:
              - calls:
                  - {name: write_file, arguments: '{"path": "notes.txt", "content": "Paris"}'}
                  - {name: read_file, arguments: '{"path": "missing.txt"}'}
  - id: critic
    backend:
      type: sim
      model: sim-beta
      scenario:
        models:
          sim-beta:
            always: {fault: "401", text: "invalid api key"}
  - id: writer
    backend:
      type: sim
      model: sim-gamma
`
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test"}
	var stderr lockedBuffer
	env := &app.Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: dir}
	out, err := app.Execute(t.Context(), env, app.Request{
		Question:  "What is the capital of France?",
		Team:      app.Team{Config: filepath.Join(dir, "c.yaml")},
		Overrides: app.Overrides{Timeout: 120},
		Logging:   app.Logging{NoLogs: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "completed" {
		t.Fatalf("status %s, err %v\n%s", out.Status, out.Err, stderr.String())
	}
	if strings.Contains(stderr.String(), "OpenTelemetry") {
		t.Errorf("stderr: %s", stderr.String())
	}

	// Execute returned after its flush: everything is in the sinks now.
	res, spans := rcv.spans(t)
	if res["service.name"] != "massgen" || res["deployment.environment"] != "test" {
		t.Errorf("resource: %v", res)
	}
	defer func() {
		if t.Failed() {
			for _, s := range spans {
				t.Logf("%s %s<-%s %v %q %v %v", s.name, s.id, s.parent, s.status, s.statusMessage, s.attrs, s.events)
			}
		}
	}()
	var root *span
	byID := map[string]*span{}
	for i := range spans {
		byID[spans[i].id] = &spans[i]
		if spans[i].parent == "" {
			if root != nil {
				t.Fatalf("two root spans: %s and %s", root.name, spans[i].name)
			}
			root = &spans[i]
		}
	}
	if root == nil || root.name != "invoke_agent massgen" {
		t.Fatalf("root span: %+v", root)
	}
	if root.attrs["gen_ai.operation.name"] != "invoke_agent" || root.attrs["massgen.status"] != "completed" ||
		root.attrs["massgen.winner"] != out.Winner || root.status == ptrace.StatusCodeError {
		t.Errorf("root: %v (%v)", root.attrs, root.status)
	}

	var in, outTok int64
	kinds := map[string]int{}
	var criticFailed, answered, voted bool
	tools := map[string]*span{}
	chats := map[string]int{}
	var chatIn, chatOut int64
	for i := range spans {
		s := &spans[i]
		if s.trace != root.trace {
			t.Errorf("%s is in another trace", s.name)
		}
		if s == root {
			continue
		}
		parent := byID[s.parent]
		if parent == nil {
			t.Errorf("%s: parent %s not received", s.name, s.parent)
			continue
		}
		if s.start > s.end || s.start < root.start || s.end > root.end {
			t.Errorf("%s [%v, %v] is not within the run [%v, %v]", s.name, s.start, s.end, root.start, root.end)
		}
		switch {
		case strings.HasPrefix(s.name, "invoke_agent "):
			if parent != root {
				t.Errorf("%s: parent %s, want the run", s.name, parent.name)
			}
			agent := strings.TrimPrefix(s.name, "invoke_agent ")
			if s.attrs["gen_ai.agent.id"] != agent || s.attrs["gen_ai.provider.name"] != "sim" || s.attrs["gen_ai.system"] != "sim" {
				t.Errorf("%s: %v", s.name, s.attrs)
			}
			model := map[string]string{"researcher": "sim-alpha", "critic": "sim-beta", "writer": "sim-gamma"}[agent]
			if s.attrs["gen_ai.request.model"] != model {
				t.Errorf("%s: model %v, want %s", s.name, s.attrs["gen_ai.request.model"], model)
			}
			kinds[s.attrs["massgen.turn.kind"].(string)]++
			in += s.attrs["gen_ai.usage.input_tokens"].(int64)
			outTok += s.attrs["gen_ai.usage.output_tokens"].(int64)
			if agent == "critic" {
				if s.status != ptrace.StatusCodeError || s.attrs["error.type"] != "auth" || s.attrs["http.response.status_code"] != int64(401) {
					t.Errorf("critic's turn: status %v %q, %v", s.status, s.statusMessage, s.attrs)
				}
				criticFailed = true
			} else if s.status == ptrace.StatusCodeError {
				t.Errorf("%s failed: %s", s.name, s.statusMessage)
			}
			for j, e := range s.events {
				switch e {
				case "massgen.new_answer":
					answered = answered || strings.HasPrefix(s.eventAttrs[j]["massgen.answer.label"].(string), "agent")
				case "massgen.vote_cast":
					voted = voted || s.eventAttrs[j]["massgen.vote.target"] == out.Winner
				}
			}
		case strings.HasPrefix(s.name, "execute_tool "):
			if !strings.HasPrefix(parent.name, "invoke_agent researcher") || parent.attrs["massgen.turn.kind"] != "coordination" {
				t.Errorf("%s: parent %s", s.name, parent.name)
			}
			if s.attrs["gen_ai.operation.name"] != "execute_tool" || s.attrs["gen_ai.tool.name"] != strings.TrimPrefix(s.name, "execute_tool ") {
				t.Errorf("%s: %v", s.name, s.attrs)
			}
			tools[s.attrs["gen_ai.tool.name"].(string)] = s
		case strings.HasPrefix(s.name, "chat "):
			// One per request to the model, under the turn (or the
			// presentation) that made it, with that request's usage.
			agent, _ := s.attrs["gen_ai.agent.id"].(string)
			if parent.name != "invoke_agent "+agent || s.attrs["gen_ai.operation.name"] != "chat" ||
				s.attrs["gen_ai.request.model"] != strings.TrimPrefix(s.name, "chat ") || s.kind != ptrace.SpanKindClient {
				t.Errorf("%s (parent %s): %v", s.name, parent.name, s.attrs)
			}
			chats[agent]++
			chatIn += s.attrs["gen_ai.usage.input_tokens"].(int64)
			chatOut += s.attrs["gen_ai.usage.output_tokens"].(int64)
			if agent == "critic" && (s.status != ptrace.StatusCodeError || s.attrs["error.type"] != "auth" || s.attrs["http.response.status_code"] != int64(401)) {
				t.Errorf("critic's request: status %v, %v", s.status, s.attrs)
			}
		default:
			t.Errorf("unexpected span %s", s.name)
		}
	}
	if chats["researcher"] < 2 || chats["critic"] < 1 || chats["writer"] < 1 {
		t.Errorf("chat spans per agent: %v, want every request (the researcher's tool step too)", chats)
	}
	if !criticFailed || !answered || !voted {
		t.Errorf("critic failed %v, an answer %v, a vote for the winner %v", criticFailed, answered, voted)
	}
	if kinds["coordination"] < 4 || kinds["presentation"] != 1 {
		t.Errorf("agent spans by kind: %v", kinds)
	}
	if w, r := tools["write_file"], tools["read_file"]; w == nil || r == nil || w.status == ptrace.StatusCodeError ||
		r.status != ptrace.StatusCodeError || r.attrs["error.type"] != "tool_error" {
		t.Errorf("tool spans: %+v", tools)
	}

	// The tokens on the spans are the run's usage, and so is the root's.
	var wantIn, wantOut int64
	for _, u := range out.Usage {
		wantIn += u.InputTokens
		wantOut += u.OutputTokens
	}
	if chatIn != wantIn || chatOut != wantOut {
		t.Errorf("chat span tokens in %d out %d, run usage in %d out %d", chatIn, chatOut, wantIn, wantOut)
	}
	if wantIn == 0 || in != wantIn || outTok != wantOut {
		t.Errorf("span tokens in %d out %d, run usage in %d out %d", in, outTok, wantIn, wantOut)
	}
	if root.attrs["gen_ai.usage.input_tokens"] != wantIn || root.attrs["gen_ai.usage.output_tokens"] != wantOut {
		t.Errorf("root tokens: %v %v", root.attrs["gen_ai.usage.input_tokens"], root.attrs["gen_ai.usage.output_tokens"])
	}

	// Metrics: token usage by type sums to the run's, a failed call's
	// duration carries error.type, one run completed.
	got := metricsOf(rcv.metrics.AllMetrics())
	if got.tokens["input"] != wantIn || got.tokens["output"] != wantOut {
		t.Errorf("gen_ai.client.token.usage: %v, want input %d output %d", got.tokens, wantIn, wantOut)
	}
	if got.durations == 0 || got.failedAuth == 0 {
		t.Errorf("gen_ai.client.operation.duration: %d points, %d with error.type auth", got.durations, got.failedAuth)
	}
	if got.runs["completed"] != 1 {
		t.Errorf("massgen.runs: %v", got.runs)
	}
}

type metricSummary struct {
	tokens                map[string]int64
	durations, failedAuth uint64
	runs                  map[string]int64
}

// metricsOf reads the last export (cumulative: it holds everything).
func metricsOf(all []pmetric.Metrics) metricSummary {
	s := metricSummary{tokens: map[string]int64{}, runs: map[string]int64{}}
	if len(all) == 0 {
		return s
	}
	md := all[len(all)-1]
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				switch m.Name() {
				case "gen_ai.client.token.usage":
					dps := m.Histogram().DataPoints()
					for p := 0; p < dps.Len(); p++ {
						typ, _ := dps.At(p).Attributes().Get("gen_ai.token.type")
						s.tokens[typ.Str()] += int64(dps.At(p).Sum())
					}
				case "gen_ai.client.operation.duration":
					dps := m.Histogram().DataPoints()
					for p := 0; p < dps.Len(); p++ {
						s.durations += dps.At(p).Count()
						if e, ok := dps.At(p).Attributes().Get("error.type"); ok && e.Str() == "auth" {
							s.failedAuth += dps.At(p).Count()
						}
					}
				case "massgen.runs":
					dps := m.Sum().DataPoints()
					for p := 0; p < dps.Len(); p++ {
						st, _ := dps.At(p).Attributes().Get("massgen.status")
						s.runs[st.Str()] += dps.At(p).IntValue()
					}
				}
			}
		}
	}
	return s
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// An endpoint nobody listens on costs the run a warning, not its answer.
func TestUnreachableEndpointWarns(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	t.Cleanup(func() { _ = otlp.Shutdown(context.Background()) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // refused from now on
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": url}
	var stderr lockedBuffer
	env := &app.Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: t.TempDir()}
	out, err := app.Execute(t.Context(), env, app.Request{Question: "q", Team: app.Team{Config: "@examples/sim_three_agents"}, Logging: app.Logging{NoLogs: true}})
	if err != nil || out.Status != "completed" {
		t.Fatalf("status %v, err %v", out, err)
	}
	if !strings.Contains(stderr.String(), "warning: exporting OpenTelemetry data") {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// The Go library links the light half only: the OpenTelemetry SDK and its
// exporters come with the massgen command or an explicit import.
func TestLibraryDoesNotLinkTheSDK(t *testing.T) {
	for _, pkg := range []string{"github.com/massgen/massgen/cmd/massgen", "github.com/massgen/massgen/telemetry"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		if !strings.Contains(string(out), "\ngithub.com/massgen/massgen/internal/telemetry/otlp\n") {
			t.Errorf("%s does not link the exporter", pkg)
		}
	}
	for pkg, banned := range map[string][]string{
		"github.com/massgen/massgen":                    {"github.com/massgen/massgen/internal/telemetry/otlp", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"},
		"github.com/massgen/massgen/internal/telemetry": {"go.opentelemetry.io/"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for dep := range strings.SplitSeq(string(out), "\n") {
			for _, b := range banned {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}

// Over OTLP/gRPC, in the caller's trace: with OTEL_EXPORTER_OTLP_PROTOCOL
// grpc the run reaches the collector's gRPC receiver (spans and metrics),
// and with TRACEPARENT set its root span is the caller's span's child,
// in the caller's trace, with the caller's tracestate.
func TestRunExportsOverGRPCInTheCallersTrace(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	rcv := startReceiver(t)
	t.Cleanup(func() {
		if err := otlp.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.GRPC, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"TRACEPARENT": "00-" + traceID + "-" + callerSpan + "-01", "TRACESTATE": "caller=yes"}
	var stderr lockedBuffer
	env := &app.Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: t.TempDir()}
	out, err := app.Execute(t.Context(), env, app.Request{Question: "q", Team: app.Team{Config: "@examples/sim_three_agents"}, Logging: app.Logging{NoLogs: true}})
	if err != nil || out.Status != "completed" {
		t.Fatalf("status %v, err %v\n%s", out, err, stderr.String())
	}
	if strings.Contains(stderr.String(), "OpenTelemetry") {
		t.Errorf("stderr: %s", stderr.String())
	}
	_, spans := rcv.spans(t)
	if len(spans) < 4 {
		t.Fatalf("%d spans over gRPC; want the run, its turns and its model calls", len(spans))
	}
	var root *span
	for i, s := range spans {
		if s.trace != traceID {
			t.Errorf("span %s is in trace %s, not the caller's %s", s.name, s.trace, traceID)
		}
		if s.parent == callerSpan {
			if root != nil {
				t.Errorf("two spans under the caller's: %s and %s", root.name, s.name)
			}
			root = &spans[i]
		}
	}
	if root == nil || root.name != "invoke_agent massgen" {
		t.Fatalf("no run span under the caller's span %s: %+v", callerSpan, root)
	}
	for _, td := range rcv.traces.AllTraces() {
		rs := td.ResourceSpans()
		for i := 0; i < rs.Len(); i++ {
			ss := rs.At(i).ScopeSpans()
			for j := 0; j < ss.Len(); j++ {
				sp := ss.At(j).Spans()
				for k := 0; k < sp.Len(); k++ {
					if sp.At(k).Name() == "invoke_agent massgen" && sp.At(k).TraceState().AsRaw() != "caller=yes" {
						t.Errorf("the run span's tracestate is %q, want the caller's", sp.At(k).TraceState().AsRaw())
					}
				}
			}
		}
	}
	if len(rcv.metrics.AllMetrics()) == 0 {
		t.Errorf("no metrics over gRPC")
	}
}
