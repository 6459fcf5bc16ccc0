// Package config loads and validates MassGen configuration files.
//
// massgen must read the YAML (or JSON) configs written for the original
// Python MassGen unchanged, so a user can switch without rewriting anything.
// This package is the one place that knows that format: it turns a file into
// a typed [Config] for the orchestrator and CLI, and it turns every mistake in
// the file into a [Diagnostic] that names the file, line, column and key path
// and, where it can, suggests the fix ("did you mean 'openai'?"). Upstream
// MassGen reports errors without positions; we parse the YAML AST (goccy/go-yaml)
// instead of decoding into maps precisely so that every message can point at
// the offending line.
//
// Compatibility rules, in short (details next to the code that applies them):
//
//   - Every key is acted on, ignored with a warning, or an error. Keys of
//     upstream features this version does not implement yet load (so MassGen
//     configs work unchanged), are kept in the Extra maps for later features,
//     warn at their line, and are listed by [Config.IgnoredFeatures], which
//     the CLI prints (`WARNINGS:`) and the run log records; ignored.go
//     classifies every accepted key, and a test keeps that complete.
//   - Keys nobody knows draw a warning with a did-you-mean suggestion. Inside
//     a backend the rule is params.go's allowlist: a documented parameter of
//     the API the backend type speaks is sent (type-checked); anything else,
//     a parameter of another API or a key nobody knows, is warned about and
//     never sent; `extra_body` sends parameters as is, without a warning.
//   - MassGen v0.1.73's keys (upstream.go) load: its display types map onto
//     massgen's displays, its voting sensitivities onto the nearest level
//     massgen implements, and the keys of features this version does not
//     implement yet warn with the feature's name.
//   - Plain YAML 1.1 booleans (yes/no/on/off) are read as booleans, because
//     upstream reads configs with PyYAML, which does so.
//   - ${VAR} and ${VAR:-default} are expanded in every string value.
//
// Where upstream is buggy this package follows DESIGN.md instead: `silent`
// and `none` are valid display types, `orchestrator.timeout` is honoured rather than
// ignored, and `max_new_answers_per_agent` defaults to 5 so that runs converge.
package config
