// Package provider is the catalogue of backend kinds massgen accepts in a
// config's `backend.type`: for each, the wire API it speaks, its default base
// URL and the environment variables that hold its API key. Config validation
// reads it to check names and suggest fixes; the CLI reads it to build models.
//
// It is data only and imports nothing from massgen, so both can depend on it.
package provider
