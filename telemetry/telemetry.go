// Package telemetry links OpenTelemetry export into a program that uses
// package massgen. Import it for its effect:
//
//	import _ "github.com/massgen/massgen/telemetry"
//
// Then every run exports its traces and metrics over OTLP/HTTP (protobuf)
// when the standard variables ask for it — OTEL_EXPORTER_OTLP_ENDPOINT
// (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _METRICS_ENDPOINT),
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME (default "massgen"),
// OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED — read through
// Options.Getenv (default the process environment and .env files). With
// no endpoint set nothing is set up and no goroutine is started.
//
// The spans follow the OpenTelemetry GenAI semantic conventions: an
// invoke_agent span for the run, one per agent turn (with its token usage
// and cost, failures as error status with error.type the failure's kind),
// the final presentation and post-evaluation, and an execute_tool span per
// tool call; the metrics are gen_ai.client.token.usage,
// gen_ai.client.operation.duration, massgen.client.cost and massgen.runs.
// The massgen command links this; package massgen alone does not (the
// OpenTelemetry SDK and protobuf are about a hundred packages).
package telemetry

import _ "github.com/massgen/massgen/internal/telemetry/otlp"
