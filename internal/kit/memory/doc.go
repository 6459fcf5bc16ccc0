// Package memory is v0.1.73's filesystem memory
// (orchestrator.coordination.enable_memory_filesystem_mode): each agent's
// workspace holds memory/short_term/ (small notes shown in full every
// turn) and memory/long_term/ (longer notes listed by description, read on
// demand), markdown files with optional YAML front matter.
//
// Prepare lays the directories out and says what the agent's Guard must
// add so learning_capture_mode holds (the memory directory closed for the
// rounds, the verification memo open); Carry brings the previous session
// turn's winner's memories in; Section is the prompt section; Merge copies
// the other agents' memories into the winner's workspace after a run.
//
// Every file massgen writes here goes through a Guard over the target
// workspace; every file it reads from an agent's workspace or a log
// directory is read through kitfile (no link followed out, regular files
// only, bounded). It imports no orchestrator, agent or app package.
package memory
