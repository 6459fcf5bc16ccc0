package runlog

import (
	"cmp"
	"path/filepath"
	"slices"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// eventsFile is coordination_events.json. Events are the event package's
// own JSON, so the file can be replayed into a Writer or the coordination
// tests without a translation layer.
type eventsFile struct {
	SessionMetadata sessionMetadata `json:"session_metadata"`
	Events          []event.Event   `json:"events"`
}

type sessionMetadata struct {
	Question    string     `json:"question"`
	AgentIDs    []string   `json:"agent_ids"`
	StartTime   time.Time  `json:"start_time"`
	EndTime     *time.Time `json:"end_time"`
	FinalWinner string     `json:"final_winner"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	// DeltaEvents counts the streaming deltas that were received but not
	// listed: they are in agent_outputs/, and listing them would bury the
	// events that matter. DroppedDeltas is what the subscription lost.
	DeltaEvents   int    `json:"delta_events"`
	DroppedDeltas uint64 `json:"dropped_deltas"`
}

func (w *Writer) writeEvents() error {
	evs := slices.Clone(w.events)
	if evs == nil {
		evs = []event.Event{}
	}
	// Handle already sees events in Seq order from a broker; sorting makes
	// the file right even for callers that feed events from elsewhere.
	slices.SortStableFunc(evs, func(a, b event.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	f := eventsFile{
		SessionMetadata: sessionMetadata{
			Question:      w.question,
			AgentIDs:      slices.Clone(w.order),
			StartTime:     w.started,
			FinalWinner:   w.cur.finalAgent,
			Status:        w.status,
			Attempts:      w.cur.n,
			DeltaEvents:   w.deltas,
			DroppedDeltas: w.dropped,
		},
		Events: evs,
	}
	if f.SessionMetadata.AgentIDs == nil {
		f.SessionMetadata.AgentIDs = []string{}
	}
	if f.SessionMetadata.FinalWinner == "" {
		f.SessionMetadata.FinalWinner = w.cur.winner
	}
	if !w.finishedAt.IsZero() {
		end := w.finishedAt
		f.SessionMetadata.EndTime = &end
	}
	return writeJSON(filepath.Join(w.dir, "coordination_events.json"), f)
}
