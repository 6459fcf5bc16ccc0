package runlog

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// journalName is the append-only events file: one JSON record per line,
// written as each event is handled, so a run that dies leaves every event
// it accepted on disk. coordination_events.json is the same list as one
// document, written at the end for tools that read the older format.
const journalName = "coordination_events.jsonl"

// eventsFile is coordination_events.json. Events are event.Record, the
// event package's flat JSON, so the file can be replayed into a Writer or
// a View (event.FromRecord) without a translation layer.
type eventsFile struct {
	SessionMetadata sessionMetadata `json:"session_metadata"`
	Events          []event.Record  `json:"events"`
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

// appendJournal adds one record to coordination_events.jsonl.
func (w *Writer) appendJournal(r event.Record) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return err
	}
	_, err := w.journal.Write(b.Bytes())
	if errors.Is(err, errStopped) {
		return nil // the journal stopped at its first failure, reported then
	}
	return err
}

func (w *Writer) writeEvents() error {
	evs := slices.Clone(w.events)
	if evs == nil {
		evs = []event.Record{}
	}
	// Handle already sees events in Seq order from a broker; sorting makes
	// the file right even for callers that feed events from elsewhere.
	slices.SortStableFunc(evs, func(a, b event.Record) int { return cmp.Compare(a.Seq, b.Seq) })
	s := w.snapshot()
	f := eventsFile{
		SessionMetadata: sessionMetadata{
			Question:      s.Question,
			AgentIDs:      []string{},
			StartTime:     w.started,
			FinalWinner:   cmp.Or(s.FinalAgent, s.Winner),
			Status:        s.Status,
			Attempts:      s.Attempt,
			DeltaEvents:   s.Deltas,
			DroppedDeltas: w.dropped,
		},
		Events: evs,
	}
	for _, ag := range s.Agents {
		f.SessionMetadata.AgentIDs = append(f.SessionMetadata.AgentIDs, ag.ID)
	}
	if !s.FinishedAt.IsZero() {
		end := s.FinishedAt
		f.SessionMetadata.EndTime = &end
	}
	return w.putJSON(filepath.Join(w.dir, "coordination_events.json"), f)
}
