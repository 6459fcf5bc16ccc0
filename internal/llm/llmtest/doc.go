// Package llmtest holds the test scaffolding the LLM adapters' tests share:
// the go-vcr cassettes of real provider traffic kept beside the project and
// their loader, a stream collector, and the cancellation and stream-closing
// assertions every adapter must pass.
//
// It is imported only by _test files.
package llmtest
