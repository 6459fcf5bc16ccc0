package otlp

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// The metrics. The first two are the GenAI semantic conventions' client
// metrics; the others are massgen's.
const (
	metricTokens   = "gen_ai.client.token.usage"        // histogram, {token}, per turn and token type
	metricDuration = "gen_ai.client.operation.duration" // histogram, s, per turn
	metricCost     = "massgen.client.cost"              // counter, USD
	metricRuns     = "massgen.runs"                     // counter, {run}, by status
)

// The bucket boundaries the GenAI conventions advise.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

func views() []sdkmetric.View {
	bucket := func(name string, b []float64) sdkmetric.View {
		return sdkmetric.NewView(sdkmetric.Instrument{Name: name},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: b}})
	}
	return []sdkmetric.View{bucket(metricTokens, tokenBuckets), bucket(metricDuration, durationBuckets)}
}

type instruments struct {
	tokens   metric.Int64Histogram
	duration metric.Float64Histogram
	cost     metric.Float64Counter
	runs     metric.Int64Counter
}

// newInstruments makes the instruments on meter (nil: metrics are not
// exported, the instruments do nothing).
func newInstruments(meter metric.Meter) (*instruments, error) {
	if meter == nil {
		meter = noop.NewMeterProvider().Meter(scope)
	}
	var i instruments
	var err error
	if i.tokens, err = meter.Int64Histogram(metricTokens, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used, per agent turn")); err != nil {
		return nil, err
	}
	if i.duration, err = meter.Float64Histogram(metricDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of an agent's turn (its model calls and tool calls)")); err != nil {
		return nil, err
	}
	if i.cost, err = meter.Float64Counter(metricCost, metric.WithUnit("USD"),
		metric.WithDescription("Cost of the model calls, priced from the model catalogue")); err != nil {
		return nil, err
	}
	if i.runs, err = meter.Int64Counter(metricRuns, metric.WithUnit("{run}"),
		metric.WithDescription("Runs finished, by status")); err != nil {
		return nil, err
	}
	return &i, nil
}

// call records one agent call's usage and duration (seconds); attrs
// name the operation, provider and model, errType the failure ("" none).
func (i *instruments) call(attrs []attribute.KeyValue, in, out int64, cost, seconds float64, errType string) {
	ctx := context.Background()
	tok := func(kind string, n int64) {
		i.tokens.Record(ctx, n, metric.WithAttributes(append(attrs[:len(attrs):len(attrs)], attribute.String("gen_ai.token.type", kind))...))
	}
	tok("input", in)
	tok("output", out)
	if cost > 0 {
		i.cost.Add(ctx, cost, metric.WithAttributes(attrs...))
	}
	d := attrs
	if errType != "" {
		d = append(attrs[:len(attrs):len(attrs)], attribute.String("error.type", errType))
	}
	i.duration.Record(ctx, seconds, metric.WithAttributes(d...))
}

func metricAttrsOf(kv ...attribute.KeyValue) metric.AddOption { return metric.WithAttributes(kv...) }
