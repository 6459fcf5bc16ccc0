// Package agent runs one turn of one agent: it builds the prompt from the
// task and the current answers, streams the model's response, turns the tool
// calls into a workflow action, asks the coordinator to judge it, and retries
// with a corrective message when the action is invalid (three attempts).
//
// It also runs the winner's final presentation and the optional
// post-evaluation. It knows nothing about other agents' goroutines: the
// orchestrator hands it a snapshot of answers and a Judge function.
package agent
