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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// Config is what the OTEL_* variables ask for.
type Config struct {
	// TracesURL and MetricsURL are the full OTLP/HTTP URLs spans and
	// metrics are posted to ("" for a signal that is not exported).
	TracesURL, MetricsURL string
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
	// Warnings are settings that were not understood.
	Warnings []string
}

// Key identifies a configuration, for exporters shared by the runs that
// use the same one.
func (c Config) Key() string {
	return fmt.Sprint(c.TracesURL, "|", c.MetricsURL, "|", c.TracesHeaders, "|", c.MetricsHeaders, "|",
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
	signal := func(name, path string) string {
		if strings.EqualFold(get("OTEL_"+name+"_EXPORTER"), "none") {
			return ""
		}
		if u := get("OTEL_EXPORTER_OTLP_" + name + "_ENDPOINT"); u != "" {
			return u // the signal's own endpoint is used as it is
		}
		if base != "" {
			return base + path
		}
		return ""
	}
	c.TracesURL = signal("TRACES", "/v1/traces")
	c.MetricsURL = signal("METRICS", "/v1/metrics")
	if c.TracesURL == "" && c.MetricsURL == "" {
		return Config{}, false
	}
	for _, u := range []*string{&c.TracesURL, &c.MetricsURL} {
		if *u == "" {
			continue
		}
		if p, err := url.Parse(*u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("OpenTelemetry endpoint %q is not an http(s) URL; not exported there", *u))
			*u = ""
		}
	}
	if c.TracesURL == "" && c.MetricsURL == "" {
		return c, false
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		if p := get(k); p != "" && p != "http/protobuf" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s=%s is not supported: massgen exports OTLP over http/protobuf", k, p))
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
