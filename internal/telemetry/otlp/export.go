// Package otlp exports runs as OpenTelemetry traces and metrics over
// OTLP/HTTP (protobuf) or OTLP/gRPC. Importing it registers it with
// internal/telemetry; it sets nothing up until a run finds an endpoint
// configured, and then only once per configuration: the exporters, a
// batch span processor (its one goroutine) and a manual metric reader
// (none) are shared by every run of the process that uses the same
// configuration. Each run's spans and metrics are derived from its
// events alone (spans.go), by a subscriber of the run's broker, and
// flushed when the run ends.
package otlp

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/telemetry"
)

func init() { telemetry.Register(start) }

// scope is the instrumentation scope of massgen's spans and metrics.
const scope = "github.com/massgen/massgen"

// pipeline is what one configuration exports through.
type pipeline struct {
	tp     *sdktrace.TracerProvider // nil when traces are not exported
	spans  *quietExporter
	tracer trace.Tracer
	mp     *sdkmetric.MeterProvider // nil when metrics are not exported
	reader *sdkmetric.ManualReader
	mexp   sdkmetric.Exporter
	inst   *instruments
	// exportMu makes concurrent runs' metric exports one at a time.
	exportMu sync.Mutex
}

var (
	mu        sync.Mutex
	pipelines = map[string]*pipeline{}
)

func pipelineFor(c telemetry.Config) (*pipeline, error) {
	mu.Lock()
	defer mu.Unlock()
	key := c.Key()
	if p := pipelines[key]; p != nil {
		return p, nil
	}
	res := resourceOf(c)
	p := &pipeline{tracer: noop.NewTracerProvider().Tracer(scope)}
	ctx := context.Background()
	if c.TracesURL != "" {
		exp, err := spanExporter(ctx, c)
		if err != nil {
			return nil, err
		}
		p.spans = &quietExporter{SpanExporter: exp}
		p.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(p.spans),
			sdktrace.WithSampler(sdktrace.AlwaysSample()))
		p.tracer = p.tp.Tracer(scope)
	}
	var meter metric.Meter
	if c.MetricsURL != "" {
		exp, err := metricExporter(ctx, c)
		if err != nil {
			if p.tp != nil {
				_ = p.tp.Shutdown(ctx)
			}
			return nil, err
		}
		// A manual reader: no goroutine; each run's end collects and
		// exports (cumulative, so concurrent runs add up).
		p.reader = sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(exp.Temporality),
			sdkmetric.WithAggregationSelector(exp.Aggregation))
		p.mexp = exp
		p.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(p.reader), sdkmetric.WithView(views()...))
		meter = p.mp.Meter(scope)
	}
	inst, err := newInstruments(meter)
	if err != nil {
		return nil, err
	}
	p.inst = inst
	pipelines[key] = p
	return p, nil
}

// spanExporter is the OTLP span exporter c asks for: over HTTP or gRPC,
// without retries (a run's end waits for its export, bounded by
// c.Timeout; a collector that is down costs one attempt, not a backoff).
func spanExporter(ctx context.Context, c telemetry.Config) (sdktrace.SpanExporter, error) {
	if c.TracesProtocol == telemetry.ProtocolGRPC {
		return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(c.TracesURL), otlptracegrpc.WithHeaders(c.TracesHeaders),
			otlptracegrpc.WithTimeout(c.Timeout), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	}
	return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.TracesURL), otlptracehttp.WithHeaders(c.TracesHeaders),
		otlptracehttp.WithTimeout(c.Timeout), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
}

// metricExporter is spanExporter for metrics.
func metricExporter(ctx context.Context, c telemetry.Config) (sdkmetric.Exporter, error) {
	if c.MetricsProtocol == telemetry.ProtocolGRPC {
		return otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(c.MetricsURL), otlpmetricgrpc.WithHeaders(c.MetricsHeaders),
			otlpmetricgrpc.WithTimeout(c.Timeout), otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}))
	}
	return otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(c.MetricsURL), otlpmetrichttp.WithHeaders(c.MetricsHeaders),
		otlpmetrichttp.WithTimeout(c.Timeout), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
}

// parentOf is the context a run's root span starts in: the caller's
// trace when c carries one (Config.Parent), else none.
func parentOf(c telemetry.Config) context.Context {
	if c.Parent == "" {
		return context.Background()
	}
	carrier := propagation.MapCarrier{"traceparent": c.Parent}
	if c.ParentState != "" {
		carrier["tracestate"] = c.ParentState
	}
	return propagation.TraceContext{}.Extract(context.Background(), carrier)
}

// resourceOf is the process's resource: OTEL_RESOURCE_ATTRIBUTES, then
// service.name, over the SDK's own attributes.
func resourceOf(c telemetry.Config) *resource.Resource {
	keys := make([]string, 0, len(c.Resource))
	for k := range c.Resource {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	attrs := make([]attribute.KeyValue, 0, len(keys)+1)
	for _, k := range keys {
		attrs = append(attrs, attribute.String(k, c.Resource[k]))
	}
	attrs = append(attrs, attribute.String("service.name", c.ServiceName))
	sdk := resource.NewSchemaless(
		attribute.String("telemetry.sdk.language", "go"),
		attribute.String("telemetry.sdk.name", "opentelemetry"),
	)
	res, err := resource.Merge(sdk, resource.NewSchemaless(attrs...))
	if err != nil {
		return resource.NewSchemaless(attrs...)
	}
	return res
}

// exportMetrics collects what the meter provider holds and exports it.
func (p *pipeline) exportMetrics(ctx context.Context) error {
	if p.reader == nil {
		return nil
	}
	p.exportMu.Lock()
	defer p.exportMu.Unlock()
	var rm metricdata.ResourceMetrics
	if err := p.reader.Collect(ctx, &rm); err != nil {
		return err
	}
	if len(rm.ScopeMetrics) == 0 {
		return nil
	}
	return p.mexp.Export(ctx, &rm)
}

// run is one run's telemetry: the subscriber goroutine deriving spans.
type run struct {
	p    *pipeline
	done chan struct{}
}

func start(c telemetry.Config, b *event.Broker) (telemetry.Run, error) {
	p, err := pipelineFor(c)
	if err != nil {
		return nil, err
	}
	// Streamed text and progress ticks say nothing a span keeps; this
	// subscriber may be cut if it lags (it then ends its spans in error),
	// so it can never hold the run back.
	sub := b.SubscribeWith(event.SubscribeOptions{Skip: slices.Concat(event.Deltas, event.Ticks)})
	r := &run{p: p, done: make(chan struct{})}
	d := newDeriver(p.tracer, p.inst, c.CaptureContent)
	d.parent = parentOf(c)
	go func() {
		defer close(r.done)
		for {
			e, ok := sub.Next(nil)
			if !ok {
				break
			}
			d.handle(e)
		}
		d.close(sub.Err(), time.Now())
	}()
	return r, nil
}

func (r *run) Finish(ctx context.Context) error {
	select {
	case <-r.done:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	var errs []error
	if r.p.tp != nil {
		errs = append(errs, r.p.tp.ForceFlush(ctx), r.p.spans.takeErr())
	}
	errs = append(errs, r.p.exportMetrics(ctx))
	return errors.Join(errs...)
}

// quietExporter keeps the error of a failed export for the next Finish
// to report, instead of letting the batch processor hand it to the
// OpenTelemetry global error handler (which would print it, mid-run, over
// a terminal UI).
type quietExporter struct {
	sdktrace.SpanExporter
	mu  sync.Mutex
	err error
}

func (e *quietExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.mu.Lock()
		e.err = err
		e.mu.Unlock()
	}
	return nil
}

// takeErr returns the last export error since it was last called.
func (e *quietExporter) takeErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.err
	e.err = nil
	return err
}

// Shutdown flushes and stops every exporter this process set up (the
// batch span processor's goroutine with them); runs started afterwards set
// them up again. For tests and for programs that want a clean exit.
func Shutdown(ctx context.Context) error {
	mu.Lock()
	ps := pipelines
	pipelines = map[string]*pipeline{}
	mu.Unlock()
	var errs []error
	for _, p := range ps {
		if p.tp != nil {
			errs = append(errs, p.tp.Shutdown(ctx))
		}
		if p.mp != nil {
			errs = append(errs, p.exportMetrics(ctx), p.mp.Shutdown(ctx), p.mexp.Shutdown(ctx))
		}
	}
	return errors.Join(errs...)
}
