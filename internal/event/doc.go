// Package event is the typed record of a run: every state change the
// orchestrator makes (turn started, answer accepted, vote rejected, agent
// failed, final answer…) becomes one Event with a sequence number, and a
// Broker fans them out to displays, logs and servers.
//
// Streaming deltas are plentiful and disposable: a slow subscriber loses
// them rather than slowing the run. Everything else (answers, votes,
// failures, finals) is never dropped. This package imports only the
// standard library.
package event
