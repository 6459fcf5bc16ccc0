// Package coord is the coordination protocol of massgen as a pure state
// machine: inputs in (a turn proposed an action, a turn failed, the run timed
// out), commands out (start a turn, cancel a turn, inject new answers, present
// the winner, fail the run). It owns the rules of DESIGN.md §2 — epochs, vote
// invalidation, anonymous labels, answer caps, novelty, the failure budget,
// consensus and the winner — and nothing else.
//
// It has no goroutines, no clock and no I/O, and imports only the standard
// library, so every rule is tested with scripted inputs (golden transcripts in
// testdata/) and a run can be replayed from its event log. The orchestrator
// is the only caller: it turns commands into model requests and feeds the
// results back, one input at a time.
package coord
