package coord

import "bytes"

// Divergence is the first step at which a replay differs from the log:
// the rules changed since the run, or the log was edited.
type Divergence struct {
	Step     int // index into Log.Steps
	Recorded []Command
	Replayed []Command
}

// Check replays the log through a fresh Machine, calling step (when not
// nil) with each step's index, input and the commands the replay gave,
// and the machine after it. It returns the first step whose commands
// differ from the recorded ones, or nil when the run reproduces: the same
// decisions, in the same order. Commands are compared in their encoded
// form, the form the log keeps.
func (l *Log) Check(step func(i int, in Input, out []Command, m *Machine)) *Divergence {
	m := New(l.Config)
	for i, r := range l.Steps {
		out := m.Step(r.In)
		if step != nil {
			step(i, r.In, out, m)
		}
		if !sameCommands(out, r.Out) {
			return &Divergence{Step: i, Recorded: r.Out, Replayed: out}
		}
	}
	return nil
}

func sameCommands(a, b []Command) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, errx := MarshalCommand(a[i])
		y, erry := MarshalCommand(b[i])
		if errx != nil || erry != nil || !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}
