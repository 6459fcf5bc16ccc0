// Package agent runs one turn of one agent: it builds the prompt from the
// task and the current answers, streams the model's response, runs the
// agent's own tools as often as the model calls them (the calls of one
// response in parallel, up to MaxToolSteps steps), and turns the workflow
// call into an action that the workflow tool puts to the coordinator;
// an invalid action gets a corrective message and another attempt (three
// attempts). With restart_policy: inject, newer answers are shown to the
// model between requests: after each tool step and each rejected attempt.
//
// It also runs the winner's final presentation and the optional
// post-evaluation. It knows nothing about other agents' goroutines: the
// orchestrator hands it a snapshot of answers and a Judge function.
package agent
