// Package llm holds the provider-neutral vocabulary every layer above the wire
// speaks: a Request (messages and tools), the Chunks a model streams back, the
// Usage it reports and the Error it fails with, and the one-method Model seam
// that each adapter (chatcompat, openai, anthropic, gemini) implements.
//
// Adapters turn their SDK's stream into Chunks; nothing above this package
// knows which provider it talks to. An adapter depends on llm and its own SDK
// and nothing else; llm itself imports only the standard library and
// golang.org/x/time/rate.
//
// It also holds what protects a team and its providers from each other,
// as Model wrappers a team builds with Guards.Wrap, from the outside in:
//
//	WithBreaker      one circuit per endpoint and model; waits while it is open
//	WithRetry        backoff with jitter, retry-after honoured, before the first chunk only
//	WithRateLimit    requests and tokens per minute, per endpoint and model
//	WithIdleTimeout  a response silent for too long fails (the bytes are
//	                 watched by HTTPClient's transport, see WatchTransport)
//
// Errors held back by an open circuit satisfy errors.Is(err, ErrCircuitOpen);
// a stall is a *StallError. WithActivity lets a caller see how long the
// request in flight has been silent.
//
// And it holds the provider registry (registry.go): each adapter package
// registers the backend types it serves with Register — how a backend block
// is prepared (base URL, headers, vendor parameters) and how its Model is
// built — so internal/app builds any team without a switch over types, and
// adding a provider touches only its adapter.
package llm
