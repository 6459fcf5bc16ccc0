// Package event is the typed record of a run: every state change the
// orchestrator makes (turn started, answer accepted, vote counted, agent
// failed, final answer…) becomes one value of a type in kinds.go, behind
// the sealed Event interface, with a Header (sequence number, time,
// attempt, epoch). Events carry what the coordinator knows at that moment
// — both labels of an answer (the anonymous one agents saw and the stable
// "agent<position>.<revision>" of the logs), the answer set, the tally —
// so no consumer re-derives them.
//
// A Broker numbers events, makes them durable, and fans them out to any
// number of subscribers (displays, the log writer, server and MCP
// clients). Its durable sinks (Persist: the log journal, the sessions
// database) store each event but the deltas before the view or any
// subscriber sees it: nothing is shown, streamed or acted on before it is
// stored. Streaming deltas and progress ticks are plentiful and
// disposable: a slow subscriber loses them (counted) rather than slowing
// the run. Everything else (answers, votes, failures, finals) is
// delivered in order, or a subscriber that falls too far behind is cut
// with a LagError saying where to resume; a subscriber may start from a
// sequence number (SubscribeOptions.From) to get the history first, as a
// late or reconnecting client does. The run's own writers subscribe with
// NeverCut. broker.go states the memory bounds.
//
// The View is the one state of a run built from its events (agents,
// answers, votes, tally, usage, status, stalls); the broker keeps it up to
// date and every consumer reads Snapshots of it. Describe says an event in
// words; Record is the flat JSON form the log files hold.
//
// This package imports only the standard library and coord (whose Failure
// events carry), which imports only the standard library too.
package event
