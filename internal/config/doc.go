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
//   - Keys upstream MassGen knows are accepted even when this version does not
//     act on them yet; they are kept in the Extra maps for later features. The
//     config layer cannot know which features a build implements, so it does
//     not warn about them; the component that would use a key says so at run time.
//   - Keys nobody knows draw a warning with a did-you-mean suggestion, except
//     inside a backend, where unknown keys are provider parameters passed
//     through verbatim (temperature, reasoning, extra_body, ...) as upstream does.
//   - Plain YAML 1.1 booleans (yes/no/on/off) are read as booleans, because
//     upstream reads configs with PyYAML, which does so.
//   - ${VAR} and ${VAR:-default} are expanded in every string value.
//
// Where upstream is buggy this package follows DESIGN.md instead: `silent`
// is a valid display type, `orchestrator.timeout` is honoured rather than
// ignored, and `max_new_answers_per_agent` defaults to 5 so that runs converge.
package config
