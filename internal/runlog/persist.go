package runlog

import "github.com/massgen/massgen/internal/event"

// Persist appends e to coordination_events.jsonl at once, with one
// write(2): it is a durable sink for event.Broker.Persist, so an event is
// in the journal (where the OS keeps it across a kill -9) before any
// subscriber (a display, a client, the rest of this writer) sees it.
// Droppable events are not journaled, as Handle does not journal them.
// Once Persist has been called, Handle leaves the journal to it. Calls
// must not overlap (a broker calls its sinks one at a time, in sequence
// order); they may overlap Handle.
func (w *Writer) Persist(e event.Event) error {
	if e.Type().Droppable() {
		return nil
	}
	w.persisted.Store(true)
	return w.appendJournal(event.ToRecord(e))
}
