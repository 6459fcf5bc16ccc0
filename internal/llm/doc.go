// Package llm holds the provider-neutral vocabulary every layer above the wire
// speaks: a Request (messages and tools), the Chunks a model streams back, the
// Usage it reports and the Error it fails with, and the one-method Model seam
// that each adapter (chatcompat, later openai, anthropic, gemini) implements.
//
// Adapters turn their SDK's stream into Chunks; nothing above this package
// knows which provider it talks to. This package imports only the standard
// library, so an adapter depends on llm and its own SDK and nothing else.
package llm
