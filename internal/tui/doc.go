// Package tui is massgen's live terminal display: a Bubble Tea program that
// draws a run as it happens (one card per agent with its streamed text and
// tool calls, a timeline, the vote tally as bars, tokens, cost and time
// against the deadline) and, at the end, the final answer as markdown. In
// an interactive session the same program also holds the conversation: an
// input page (input.go) with the questions, final answers and command
// output so far above a multi-line prompt, between the turns' run views.
//
// It reads the run only through its event subscription and the shared
// event.View, so it never slows the run: the broker drops deltas for a
// reader that falls behind, and the pump here coalesces what it reads into
// one message per frame (at most every 50 ms). The model (Update / View)
// is plain data in, text out: tests render scripted events at fixed sizes
// without a terminal (see golden_test.go).
package tui
