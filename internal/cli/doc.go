// Package cli is the massgen command line: flag parsing (cobra), config
// resolution, wiring of concrete parts (providers, simulator, logs,
// displays) and exit codes. It is the only package that knows every other
// one; main just calls Run.
//
// Exit codes (DESIGN.md §6): 0 success, 1 config or usage error, 2 execution
// error (all agents failed, provider errors), 3 timeout without an answer,
// 4 interrupted.
package cli
