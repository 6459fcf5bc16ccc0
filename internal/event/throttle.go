package event

import "time"

// TickThrottle decides which of a running tool's progress ticks a reader
// for people passes on (the plain display, massgen mcp's progress
// notifications): a server may send hundreds, a person wants a few.
// Per agent and tool it lets through the first tick, then one each time
// the tool passes a quarter of its total (so the end, total of total,
// always shows), and, for ticks without a total (log messages, counters),
// at most one a second by the events' own times, so the rule does not
// depend on how fast the display reads. The tool's tool_called line ends
// its call and forgets it. The zero TickThrottle is ready to use; it is
// not safe for concurrent use.
type TickThrottle struct {
	last map[progressKey]progressMark
}

type progressKey struct{ agent, tool string }

type progressMark struct {
	quarter int // -1 until a tick with a total was shown
	at      time.Time
}

// Show reports whether e (a ToolProgress) gets a line; other events pass,
// and a ToolCalled resets its tool.
func (t *TickThrottle) Show(e Event) bool {
	switch e := e.(type) {
	case ToolCalled:
		delete(t.last, progressKey{e.Agent, e.Tool})
		return true
	case ToolProgress:
		if t.last == nil {
			t.last = map[progressKey]progressMark{}
		}
		k := progressKey{e.Agent, e.Tool}
		at := e.Head().Time
		m, seen := t.last[k]
		q := -1
		if e.Total > 0 {
			q = min(int(4*e.Progress/e.Total), 4)
		}
		switch {
		case !seen:
		case q > m.quarter:
		case q < 0 && at.Sub(m.at) >= time.Second:
		default:
			return false
		}
		t.last[k] = progressMark{quarter: max(q, m.quarter), at: at}
		return true
	}
	return true
}
