// Package event is the typed record of a run: every state change the
// orchestrator makes (turn started, answer accepted, vote counted, agent
// failed, final answer…) becomes one value of a type in kinds.go, behind
// the sealed Event interface, with a Header (sequence number, time,
// attempt, epoch). Events carry what the coordinator knows at that moment
// — both labels of an answer (the anonymous one agents saw and the stable
// "agent<position>.<revision>" of the logs), the answer set, the tally —
// so no consumer re-derives them.
//
// A Broker numbers events and fans them out. Streaming deltas are
// plentiful and disposable: a slow subscriber loses them rather than
// slowing the run. Everything else (answers, votes, failures, finals) is
// never dropped.
//
// The View is the one state of a run built from its events (agents,
// answers, votes, tally, usage, status, stalls); the broker keeps it up to
// date and every consumer reads Snapshots of it. Describe says an event in
// words; Record is the flat JSON form the log files hold.
//
// This package imports only the standard library.
package event
