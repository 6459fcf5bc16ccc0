// Package coord is the coordination protocol of massgen for a whole run, as
// a pure state machine: Machine.Step(input) returns the commands that
// follow from it. Inputs say what happened (a turn proposed an action or
// failed, the deadline passed, the budget was spent, the presentation or
// the post-evaluation ended, the grace expired, the caller interrupted);
// commands say what to do (reply to a turn, start, cancel or update turns,
// have the winner present or evaluate, restart with feedback, set a timer,
// finish the run with its status and final answer).
//
// It owns the rules of DESIGN.md §2 — attempts, epochs, vote invalidation,
// anonymous labels, answer caps, novelty, the failure budget and the retry
// backoff, consensus and the winner, the presentation and its fallbacks,
// post-evaluation and restarts, the budget stop, the run deadline and the
// presentation grace — and the rules MassGen v0.1.73 added on top of them:
// fairness (fairness.go), per-round timeouts (rounds.go), checklist-gated
// voting (checklist.go), the caps on mid-stream updates (midstream.go) and
// decomposition mode (decompose.go),
// each written as upstream documents its intent where upstream's code
// falls short of it; and the one vocabulary they are written in
// (Settings, RunStatus).
//
// It has no goroutines, no clock and no I/O, and imports only the standard
// library. Inputs and commands are plain values that encode to JSON, so the
// inputs a run fed its machine are its replay log (Log): every rule is tested
// with scripted inputs (golden transcripts in testdata/), a recorded run
// replays to the same commands, and a durable workflow engine can drive the
// same machine later. The orchestrator is the only caller today: it turns
// commands into model requests and timers and feeds the results back, one
// input at a time.
package coord
