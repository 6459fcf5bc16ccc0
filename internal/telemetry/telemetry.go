// Package telemetry turns a run's events into OpenTelemetry traces and
// metrics when the standard OTEL_* environment variables ask for it.
//
// This package is the light half: it reads the configuration
// (FromEnv) and starts an exporter for a run (Start) if one is linked.
// The exporter itself — the OpenTelemetry SDK and its OTLP/HTTP
// exporters, which cost packages and init time — lives in
// internal/telemetry/otlp and registers itself when imported (the
// massgen command imports it; a Go program opts in by importing
// github.com/massgen/massgen/telemetry). Nothing is set up, and no
// goroutine is started, unless an endpoint is configured.
package telemetry

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// Config is what the OTEL_* variables ask for.
type Config struct {
	// TracesURL and MetricsURL are where spans and metrics go ("" for a
	// signal that is not exported): the full OTLP/HTTP URL, or the gRPC
	// endpoint (scheme, host and port; http:// is without TLS).
	TracesURL, MetricsURL string
	// TracesProtocol and MetricsProtocol are ProtocolHTTP or ProtocolGRPC
	// for an exported signal (OTEL_EXPORTER_OTLP_PROTOCOL and the
	// per-signal variables, which win; http/protobuf by default).
	TracesProtocol, MetricsProtocol string
	// Headers sent with each export (OTEL_EXPORTER_OTLP_HEADERS and the
	// per-signal variables, which win).
	TracesHeaders, MetricsHeaders map[string]string
	// ServiceName is service.name (OTEL_SERVICE_NAME, default "massgen");
	// Resource holds OTEL_RESOURCE_ATTRIBUTES.
	ServiceName string
	Resource    map[string]string
	// Timeout bounds the export at the end of a run
	// (OTEL_EXPORTER_OTLP_TIMEOUT, default 10 s).
	Timeout time.Duration
	// CaptureContent adds the question, answers, vote reasons and the
	// final answer to the spans
	// (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true); off by
	// default, as the GenAI conventions ask.
	CaptureContent bool
	// Parent and ParentState are the caller's W3C trace context
	// (traceparent and tracestate: the TRACEPARENT and TRACESTATE
	// variables, or massgen serve's request headers): the run's root span
	// becomes its child, so the run sits inside the caller's trace. ""
	// starts a new trace.
	Parent, ParentState string
	// Warnings are settings that were not understood.
	Warnings []string
}

// The OTLP transports massgen exports over.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// traceparent is a W3C traceparent of version 00 (the only one defined;
// later versions start with the same fields, which is what a parent
// needs).
var traceparent = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$`)
})

// ValidParent reports whether tp is a traceparent a run can continue:
// well formed, not version ff, nothing after the flags in version 00 (a
// later version may add fields), and with non-zero trace and span ids.
func ValidParent(tp string) bool {
	return traceparent().MatchString(tp) && !strings.HasPrefix(tp, "ff-") && (len(tp) == 55 || !strings.HasPrefix(tp, "00-")) &&
		tp[3:35] != strings.Repeat("0", 32) && tp[36:52] != strings.Repeat("0", 16)
}

// Key identifies a configuration, for exporters shared by the runs that
// use the same one.
func (c Config) Key() string {
	return fmt.Sprint(c.TracesURL, "|", c.MetricsURL, "|", c.TracesProtocol, "|", c.MetricsProtocol, "|", c.TracesHeaders, "|", c.MetricsHeaders, "|",
		c.ServiceName, "|", c.Resource, "|", c.Timeout, "|", c.CaptureContent)
}

// DefaultTimeout bounds a run's final export when
// OTEL_EXPORTER_OTLP_TIMEOUT does not.
const DefaultTimeout = 10 * time.Second

// FromEnv reads the standard variables through getenv. ok is false when
// nothing is to be exported: no endpoint is set, OTEL_SDK_DISABLED is
// true, or both OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER are "none".
func FromEnv(getenv func(string) string) (c Config, ok bool) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if b, _ := strconv.ParseBool(get("OTEL_SDK_DISABLED")); b {
		return Config{}, false
	}
	base := strings.TrimRight(get("OTEL_EXPORTER_OTLP_ENDPOINT"), "/")
	anyProto := get("OTEL_EXPORTER_OTLP_PROTOCOL")
	protocol := func(name string) string {
		k, p := "OTEL_EXPORTER_OTLP_"+name+"_PROTOCOL", get("OTEL_EXPORTER_OTLP_"+name+"_PROTOCOL")
		if p == "" {
			k, p = "OTEL_EXPORTER_OTLP_PROTOCOL", anyProto
		}
		switch p {
		case "", ProtocolHTTP:
			return ProtocolHTTP
		case ProtocolGRPC:
			return ProtocolGRPC
		}
		warn := fmt.Sprintf("%s=%s is not supported: massgen exports OTLP over http/protobuf or grpc; using http/protobuf", k, p)
		if !slices.Contains(c.Warnings, warn) {
			c.Warnings = append(c.Warnings, warn)
		}
		return ProtocolHTTP
	}
	signal := func(name, path string) (string, string) {
		if strings.EqualFold(get("OTEL_"+name+"_EXPORTER"), "none") {
			return "", ""
		}
		proto := protocol(name)
		if u := get("OTEL_EXPORTER_OTLP_" + name + "_ENDPOINT"); u != "" {
			return u, proto // the signal's own endpoint is used as it is
		}
		if base == "" {
			return "", ""
		}
		if proto == ProtocolGRPC {
			return base, proto // gRPC has no path per signal
		}
		return base + path, proto
	}
	c.TracesURL, c.TracesProtocol = signal("TRACES", "/v1/traces")
	c.MetricsURL, c.MetricsProtocol = signal("METRICS", "/v1/metrics")
	if c.TracesURL == "" && c.MetricsURL == "" {
		return Config{}, false
	}
	for _, s := range []struct{ u, proto *string }{{&c.TracesURL, &c.TracesProtocol}, {&c.MetricsURL, &c.MetricsProtocol}} {
		if *s.u == "" {
			continue
		}
		if p, err := url.Parse(*s.u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("OpenTelemetry endpoint %q is not an http(s) URL; not exported there", *s.u))
			*s.u, *s.proto = "", ""
		}
	}
	if c.TracesURL == "" && c.MetricsURL == "" {
		return c, false
	}
	if tp := get("TRACEPARENT"); tp != "" {
		if ValidParent(tp) {
			c.Parent, c.ParentState = tp, get("TRACESTATE")
		} else {
			c.Warnings = append(c.Warnings, fmt.Sprintf("TRACEPARENT=%q is not a W3C traceparent; the run starts a new trace", tp))
		}
	}
	common, warn := parseList(get("OTEL_EXPORTER_OTLP_HEADERS"))
	c.Warnings = append(c.Warnings, warn...)
	c.TracesHeaders, c.MetricsHeaders = merged(common, get("OTEL_EXPORTER_OTLP_TRACES_HEADERS"), &c.Warnings),
		merged(common, get("OTEL_EXPORTER_OTLP_METRICS_HEADERS"), &c.Warnings)
	c.ServiceName = get("OTEL_SERVICE_NAME")
	c.Resource, warn = parseList(get("OTEL_RESOURCE_ATTRIBUTES"))
	c.Warnings = append(c.Warnings, warn...)
	if c.ServiceName == "" {
		c.ServiceName = c.Resource["service.name"]
	}
	if c.ServiceName == "" {
		c.ServiceName = "massgen"
	}
	c.Timeout = DefaultTimeout
	if t := get("OTEL_EXPORTER_OTLP_TIMEOUT"); t != "" {
		if ms, err := strconv.Atoi(t); err == nil && ms > 0 {
			c.Timeout = time.Duration(ms) * time.Millisecond
		} else {
			c.Warnings = append(c.Warnings, fmt.Sprintf("OTEL_EXPORTER_OTLP_TIMEOUT=%s is not a number of milliseconds", t))
		}
	}
	c.CaptureContent, _ = strconv.ParseBool(get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"))
	return c, true
}

// parseList parses the W3C-baggage-like "k1=v1,k2=v2" lists of the OTEL_*
// variables (values percent-encoded).
func parseList(s string) (map[string]string, []string) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	var warn []string
	for item := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			warn = append(warn, fmt.Sprintf("OpenTelemetry setting %q is not key=value; left out", strings.TrimSpace(item)))
			continue
		}
		if d, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = d
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, warn
}

func merged(common map[string]string, own string, warnings *[]string) map[string]string {
	m, warn := parseList(own)
	*warnings = append(*warnings, warn...)
	if len(common) == 0 {
		return m
	}
	out := make(map[string]string, len(common)+len(m))
	for k, v := range common {
		out[k] = v
	}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Exporter starts exporting one run: it subscribes to b before the run's
// first event and returns what Finish waits for.
type Exporter func(c Config, b *event.Broker) (Run, error)

// Run is one run's telemetry once started.
type Run interface {
	// Finish waits until every event of the closed broker is turned into
	// spans and metrics, then exports what is left, within ctx.
	Finish(ctx context.Context) error
}

var (
	mu       sync.Mutex
	exporter Exporter
	unlinked sync.Once
)

// Register makes e the exporter runs use: internal/telemetry/otlp calls
// it when it is linked in. The last registration wins.
func Register(e Exporter) {
	mu.Lock()
	defer mu.Unlock()
	exporter = e
}

// Handle is a run's telemetry as Start returned it; a nil Handle (nothing
// configured) does nothing.
type Handle struct {
	run     Run
	timeout time.Duration
	stderr  io.Writer
}

// Start reads the configuration through getenv and, when an endpoint is
// set, starts exporting the run whose events b will publish; warnings go
// to stderr. It returns nil when nothing is to be exported. Call it
// before the run's first event, and Finish after b is closed.
func Start(getenv func(string) string, b *event.Broker, stderr io.Writer) *Handle {
	c, ok := FromEnv(getenv)
	for _, w := range c.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if !ok {
		return nil
	}
	mu.Lock()
	e := exporter
	mu.Unlock()
	if e == nil {
		unlinked.Do(func() {
			fmt.Fprintln(stderr, "warning: an OpenTelemetry endpoint is set, but this program does not link the exporter "+
				"(import _ \"github.com/massgen/massgen/telemetry\"); the run is not traced")
		})
		return nil
	}
	r, err := e(c, b)
	if err != nil {
		fmt.Fprintf(stderr, "warning: OpenTelemetry: %v; the run is not traced\n", err)
		return nil
	}
	return &Handle{run: r, timeout: c.Timeout, stderr: stderr}
}

// Finish waits for the run's last spans and metrics and exports them,
// within the configured timeout; a failed export is a warning on stderr,
// never the run's error. Call it once the broker is closed.
func (h *Handle) Finish(ctx context.Context) {
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.timeout)
	defer cancel()
	if err := h.run.Finish(ctx); err != nil {
		fmt.Fprintf(h.stderr, "warning: exporting OpenTelemetry data: %v\n", err)
	}
}
