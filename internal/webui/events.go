package webui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/runlog"
)

// writeTimeout bounds each write of the event stream: a page that stops
// reading is dropped (it reconnects from where it was).
const writeTimeout = 30 * time.Second

// events is GET /api/events?run=ID: the run's events as Server-Sent
// Events in the one schema (event.Record, "v": 2), the sequence number as
// the SSE id. Last-Event-ID (or ?from=SEQ) resumes after what the page
// has, with nothing repeated and no must-deliver event lost (a reload or a
// dropped connection). A run of this process streams live from its
// broker; any other from its log, coordination_events.jsonl (a replay: the
// log has no streamed text). The stream ends with an "end" event; a page
// too slow to keep up gets an "error" event with resume_from.
func (u *UI) events(w http.ResponseWriter, r *http.Request) {
	f, ok := u.findRun(w, r.URL.Query().Get("run"))
	if !ok {
		return
	}
	from, err := eventsFrom(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return
	}
	var broker *event.Broker
	if f.live != nil {
		broker = f.live.Events
		if broker == nil && f.live.LogDir == "" && (f.live.Status == "starting" || f.live.Status == "running") {
			// The team is still being built: the page asks again.
			w.Header().Set("Retry-After", "1")
			apiError(w, http.StatusServiceUnavailable, "the run has not started yet")
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(name string, id uint64, v any) bool {
		b, _ := json.Marshal(v)
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		var err error
		if id > 0 {
			_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, name, b)
		} else {
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		}
		return err == nil && rc.Flush() == nil
	}
	if broker == nil {
		u.logEvents(f.logDir, from, send)
		return
	}
	sub := broker.SubscribeWith(event.SubscribeOptions{From: from})
	defer sub.Close()
	for {
		e, ok := sub.Next(r.Context().Done())
		if !ok {
			break
		}
		if !send(string(e.Type()), e.Head().Seq, event.ToRecord(e)) {
			return // the page went away
		}
	}
	if r.Context().Err() != nil {
		return
	}
	if err := sub.Err(); err != nil {
		resume := map[string]any{"message": err.Error()}
		if lag, ok := errors.AsType[*event.LagError](err); ok {
			resume["resume_from"] = lag.Next
		}
		if h, ok := errors.AsType[*event.HistoryError](err); ok {
			resume["resume_from"] = h.Kept
		}
		send("error", 0, resume)
		return
	}
	send("end", 0, map[string]any{"end": true})
}

var errPageGone = errors.New("the page went away")

// logEvents sends a run's events from its log, up to a torn last line.
func (u *UI) logEvents(logDir string, from uint64, send func(string, uint64, any) bool) {
	if logDir == "" {
		send("error", 0, map[string]any{"message": "this run kept no events: it ran without logs"})
		return
	}
	f, err := os.Open(filepath.Join(logDir, "coordination_events.jsonl"))
	if err != nil {
		send("error", 0, map[string]any{"message": "the run's event log cannot be read: " + err.Error()})
		return
	}
	defer f.Close()
	err = runlog.ReadJSONLines(f, func(line []byte) error {
		var rec event.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		if rec.Seq < from {
			return nil
		}
		rec.V = event.SchemaVersion
		if !send(string(rec.Type), rec.Seq, rec) {
			return errPageGone
		}
		return nil
	})
	switch {
	case errors.Is(err, errPageGone):
	case err != nil:
		send("error", 0, map[string]any{"message": "the run's event log is damaged: " + err.Error()})
	default:
		send("end", 0, map[string]any{"end": true})
	}
}

// eventsFrom is the first sequence number the page asks for: after its
// Last-Event-ID, or ?from=, or the start of the run.
func eventsFrom(r *http.Request) (uint64, error) {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return 0, errors.New("Last-Event-ID must be an event's sequence number")
		}
		return n + 1, nil
	}
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, errors.New("from must be a sequence number")
		}
		return n, nil
	}
	return 1, nil
}
