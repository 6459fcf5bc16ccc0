// Package tool is the seam between a model and what it may run: a Tool is a
// definition (what the model is told) plus Call (what happens when the model
// calls it), and a Set is one agent's tools, looked up by name.
//
// A tool never crashes a turn: Invoke turns an error, a panic, invalid
// argument JSON or a per-call timeout into an error Result, which goes back
// to the model as the call's result so it can correct itself.
//
// The workflow tools of the coordination protocol (new_answer, vote) are
// tools too: their Call proposes the action to the coordinator and reports
// its verdict. Their names and parameters are a contract with MassGen
// configs and prompts; submit and restart_orchestration keep theirs for the
// post-evaluation. MCP, custom and file tools join behind the same seam.
//
// This package imports llm and coord (for the workflow tools' names and
// verdicts) and nothing above them.
package tool
