// Package runlog turns the event stream of one run into the on-disk log
// under .massgen/massgen_logs/log_<YYYYMMDD_HHMMSS_ffffff>/ (DESIGN.md §6).
//
// A Writer consumes event.Event values (Handle, or Run over a broker
// subscription) and keeps an in-memory view of the run. From it, it writes:
//
//	execution_metadata.yaml   question, config, CLI args, versions, agents (at New)
//	massgen.log               an append-only handle for the CLI's slog handler
//	status.json               live view, atomically rewritten on every important
//	                          event and at least every 2 s while Run is running
//	coordination_events.json  every non-droppable event, in Seq order
//	coordination_events.jsonl the same, appended as each event is handled
//	coordination_replay.jsonl the coordination machine's inputs and commands,
//	                          appended as it steps (Trace; coord.ReadLog reads it)
//	coordination_table.txt    a readable epoch-by-epoch table, one column per agent
//	vote.json                 the final epoch's votes, tally, winner and labels
//	[attempt_<N>/]            only when orchestration restarts are enabled:
//	  agent_<id>/<step-ts>/     answer.txt | vote.json, plus context.txt (the prompt)
//	                            and workspace/ (a copy of the author's files with the answer)
//	  agent_outputs/<id>.txt    everything the agent streamed, with turn separators
//	  agent_outputs/final_presentation.txt
//	  final/<id>/answer.txt     the final answer (+ context.txt)
//	  vote.json                 that attempt's vote summary
//	final/<id>/answer.txt     the last attempt's final answer, always at the top
//
// The files that describe the whole run (metadata, log, status, events,
// table, vote.json, final/) always sit at the top of the log dir so that
// automation and the HTTP server find them at a fixed path whatever the
// attempt count; only the per-attempt work products move into attempt_<N>/.
//
// Epochs are counted here, from the AnswerAccepted events of the current
// attempt, rather than trusted from Event.Epoch: the log must be internally
// consistent (table rows, vote.json, status) even if an emitter gets the
// field wrong, and "epoch k" means "after the k-th accepted answer".
//
// The package never panics on I/O: every failed write is returned as an
// error, and the in-memory view is updated regardless so later writes can
// still succeed.
package runlog
