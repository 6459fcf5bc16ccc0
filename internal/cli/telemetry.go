package cli

// The massgen command (and its serve and mcp commands) exports runs to
// OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT or its like is set.
import _ "github.com/massgen/massgen/internal/telemetry/otlp"
