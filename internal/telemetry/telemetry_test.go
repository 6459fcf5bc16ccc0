package telemetry

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/event"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(string) string
		ok   bool
		want Config
	}{
		{name: "nothing set", env: env()},
		{name: "disabled", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_SDK_DISABLED", "true")},
		{name: "both exporters none", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_TRACES_EXPORTER", "none", "OTEL_METRICS_EXPORTER", "none")},
		{name: "endpoint", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"), ok: true,
			want: Config{TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics", TracesProtocol: ProtocolHTTP, MetricsProtocol: ProtocolHTTP,
				ServiceName: "massgen", Timeout: DefaultTimeout}},
		{name: "traces only, as given", env: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://t.example/otlp", "OTEL_SERVICE_NAME", "svc",
			"OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20x, a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "a=2",
			"OTEL_EXPORTER_OTLP_TIMEOUT", "2500", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"), ok: true,
			want: Config{TracesURL: "https://t.example/otlp", TracesProtocol: ProtocolHTTP, TracesHeaders: map[string]string{"authorization": "Bearer x", "a": "2"},
				MetricsHeaders: map[string]string{"authorization": "Bearer x", "a": "1"}, ServiceName: "svc", Timeout: 2500 * time.Millisecond,
				CaptureContent: true}},
		{name: "metrics off", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_METRICS_EXPORTER", "none",
			"OTEL_RESOURCE_ATTRIBUTES", "service.name=from-resource,team=x"), ok: true,
			want: Config{TracesURL: "http://c:4318/v1/traces", TracesProtocol: ProtocolHTTP, ServiceName: "from-resource", Resource: map[string]string{"service.name": "from-resource", "team": "x"},
				Timeout: DefaultTimeout}},
		{name: "grpc: the endpoint as it is", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317/", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), ok: true,
			want: Config{TracesURL: "http://c:4317", MetricsURL: "http://c:4317", TracesProtocol: ProtocolGRPC, MetricsProtocol: ProtocolGRPC,
				ServiceName: "massgen", Timeout: DefaultTimeout}},
		{name: "a signal's protocol wins", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc",
			"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"), ok: true,
			want: Config{TracesURL: "http://c:4318", MetricsURL: "http://c:4318/v1/metrics", TracesProtocol: ProtocolGRPC, MetricsProtocol: ProtocolHTTP,
				ServiceName: "massgen", Timeout: DefaultTimeout}},
		{name: "http/json is not offered", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"), ok: true,
			want: Config{TracesURL: "http://c:4318/v1/traces", MetricsURL: "http://c:4318/v1/metrics", TracesProtocol: ProtocolHTTP, MetricsProtocol: ProtocolHTTP,
				ServiceName: "massgen", Timeout: DefaultTimeout,
				Warnings: []string{"OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported: massgen exports OTLP over http/protobuf or grpc; using http/protobuf"}}},
		{name: "the caller's trace", env: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces",
			"TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "TRACESTATE", "vendor=x"), ok: true,
			want: Config{TracesURL: "http://c:4318/v1/traces", TracesProtocol: ProtocolHTTP, ServiceName: "massgen", Timeout: DefaultTimeout,
				Parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ParentState: "vendor=x"}},
		{name: "version 00 with more after its flags", env: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces",
			"TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"), ok: true,
			want: Config{TracesURL: "http://c:4318/v1/traces", TracesProtocol: ProtocolHTTP, ServiceName: "massgen", Timeout: DefaultTimeout,
				Warnings: []string{`TRACEPARENT="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra" is not a W3C traceparent; the run starts a new trace`}}},
		{name: "a broken traceparent", env: env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces",
			"TRACEPARENT", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"), ok: true,
			want: Config{TracesURL: "http://c:4318/v1/traces", TracesProtocol: ProtocolHTTP, ServiceName: "massgen", Timeout: DefaultTimeout,
				Warnings: []string{`TRACEPARENT="00-00000000000000000000000000000000-00f067aa0ba902b7-01" is not a W3C traceparent; the run starts a new trace`}}},
		{name: "not a URL", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "c:4318"),
			want: Config{Warnings: []string{`OpenTelemetry endpoint "c:4318/v1/traces" is not an http(s) URL; not exported there`,
				`OpenTelemetry endpoint "c:4318/v1/metrics" is not an http(s) URL; not exported there`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := FromEnv(tc.env)
			if ok != tc.ok {
				t.Errorf("ok %v, want %v", ok, tc.ok)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
}

type fakeRun struct{ finished bool }

func (r *fakeRun) Finish(context.Context) error { r.finished = true; return nil }

// Start does nothing without an endpoint, says so when no exporter is
// linked, and otherwise hands the run to the registered exporter.
func TestStart(t *testing.T) {
	defer Register(nil)
	var stderr bytes.Buffer
	b := event.NewBroker()
	if h := Start(env(), b, &stderr); h != nil || stderr.Len() != 0 {
		t.Fatalf("nothing configured: %v %q", h, stderr.String())
	}
	h := Start(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), b, &stderr)
	if h != nil || !strings.Contains(stderr.String(), "does not link the exporter") {
		t.Fatalf("unlinked: %v %q", h, stderr.String())
	}
	h.Finish(t.Context()) // a nil Handle does nothing
	r := &fakeRun{}
	var got Config
	Register(func(c Config, _ *event.Broker) (Run, error) { got = c; return r, nil })
	h = Start(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), b, &stderr)
	h.Finish(t.Context())
	if !r.finished || got.TracesURL != "http://c:4318/v1/traces" {
		t.Errorf("finished %v, config %+v", r.finished, got)
	}
}
