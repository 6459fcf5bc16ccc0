// Package store keeps interactive sessions and their turns in SQLite
// (modernc.org/sqlite, pure Go), in .massgen/sessions.db next to the logs.
//
// A session is a conversation; each turn is one team run with its question,
// every accepted answer (agent and stable label), every counted vote, the
// winner, the final answer, usage and cost per agent, its status and its log
// directory (turn_<N>/ inside the session's log directory, as upstream).
// Turns are written as they go: a turn row when the run starts, an answer
// row the moment coord accepts it, so a crash or kill -9 loses nothing that
// was accepted, and --continue finds every finished turn.
//
// Upstream MassGen keeps a JSON registry (~/.massgen/sessions.json) rewritten
// whole by every process; here several massgen processes on one directory
// share the database safely: WAL journal (readers never block the writer),
// a busy timeout, and write transactions that take the write lock at BEGIN
// (BEGIN IMMEDIATE), so two writers queue instead of failing with "database
// is locked" when one tries to upgrade a read lock. The schema is versioned
// with PRAGMA user_version and migrated forward on Open, inside one such
// transaction, so concurrent first opens do not race.
//
// massgen serve keeps its Responses here too (responses.go), as opaque JSON
// with their item ids, pruned by count, size and age, so that
// previous_response_id and item_reference outlive the server.
//
// The package knows nothing of runs or events: internal/app translates a
// run's events into Store calls.
package store
