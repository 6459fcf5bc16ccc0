package coord

// Coalesce simplifies a batch of commands from several consecutive Steps
// before the orchestrator carries them out: a turn that the batch both
// starts and cancels is never started (no request, no prompt tokens), and
// answer sets injected into a turn the batch starts are folded into its
// StartTurn. Everything else passes through in order.
//
// The orchestrator drains every input already waiting before it acts, so
// when one answer starts a turn and the next answer (already in the inbox)
// cancels it, the turn costs nothing.
func Coalesce(cmds []Command) []Command {
	started := map[TurnID]int{} // turn → index of its StartTurn in out
	var out []Command
	for _, c := range cmds {
		switch c := c.(type) {
		case StartTurn:
			started[c.Turn] = len(out)
		case CancelTurn:
			if i, ok := started[c.Turn]; ok {
				out[i] = nil
				continue
			}
		case Inject:
			if i, ok := started[c.Turn]; ok {
				if st, ok := out[i].(StartTurn); ok {
					st.Epoch, st.Answers = c.Epoch, c.Answers
					out[i] = st
				}
				continue
			}
		}
		out = append(out, c)
	}
	kept := out[:0]
	for _, c := range out {
		if t, ok := c.(SetTimer); ok && t.Timer == TimerRound {
			if i, ok := started[t.Turn]; ok && out[i] == nil {
				continue // the round timer of a turn never started
			}
		}
		if c != nil {
			kept = append(kept, c)
		}
	}
	return kept
}
