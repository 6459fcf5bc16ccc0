// Package changedoc is MassGen v0.1.73's decision journal
// (coordination.enable_changedoc, on by default) and its fast iteration
// mode (coordination.fast_iteration_mode): prompt sections only. An agent
// with a workspace keeps tasks/changedoc.md there — what it decided, the
// alternatives, why, and where the decision is implemented — the others
// read it in the answers they are shown, and the presenter consolidates
// the journals of the answers into its own. The journal lives in the
// workspace, never in a context path, so it never ends up in the user's
// project. It imports only the standard library.
package changedoc

import "fmt"

// File is the journal, relative to the agent's workspace.
const File = "tasks/changedoc.md"

// Section asks an agent with a workspace for the journal; view is where
// the answers shown to it are (answers/agent1/…), so it can read theirs.
func Section(view string) string {
	return fmt.Sprintf(`<changedoc>
Change document (decision journal). Before you start on your answer, create %[1]s in your workspace (never in a context path or its copy: it must not end up in the user's project) and keep it up to date as you work:
- a Summary of your approach;
- one entry per significant decision, as you make it: DEC-001, DEC-002, … with what you decided and why, the alternatives you rejected and why, which part of the task drove it, and Implementation: the files and symbols where it is built (only what exists, checked before you submit);
- when you build on another answer, keep the decisions you adopt with their numbers and say where each came from.
The journals of the answers you are shown are at %[2]s/<label>/%[1]s. If you present the final answer, consolidate them into your %[1]s: the decisions the final answer keeps, with where each came from.
</changedoc>`, File, view)
}

// FastIteration is fast_iteration_mode's guidance for checklist-gated
// agents: fix real gaps now and leave polish to the next round.
func FastIteration() string {
	return `<fast_iteration>
Quick impact check, before you iterate: is the improvement you plan a real gap fix, or polish the next round will catch anyway?
- If the answer misses a core requirement or is broken: fix it and submit.
- If the answer works but could be better: submit now and say what the gap is; the next round sees the gaps of every answer and addresses them with full context.
If none of your planned changes fixes a real gap, voting may be the better choice. Excellence is reached across rounds, not within one: the question is not "is this perfect now?" but "have I addressed the real gaps and built something the next round can raise further?" Before you submit, one quick verification pass: no regression of what earlier rounds got working — a working answer with fewer features beats a broken one with more.
</fast_iteration>`
}
