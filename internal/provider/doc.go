// Package provider is the catalogue of backend kinds massgen accepts in a
// config's `backend.type`: for each, the wire API it speaks, its default base
// URL and the environment variables that hold its API key. Config validation
// reads it to check names and suggest fixes; the CLI reads it to build models.
//
// It also holds the model catalogue (models.yaml: context windows and prices)
// that turns token usage into cost. It is data only and imports nothing from
// massgen but the llm vocabulary, so config, the orchestrator and the CLI can
// all depend on it.
package provider
