package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/runlog"
)

// GET /v1/runs/{id}/events: the run's events as Server-Sent Events, in the
// one event schema (event.Record with "v": event.SchemaVersion, the form
// of coordination_events.jsonl), each with its sequence number as the SSE
// id. A client that joins late gets the history first; one that
// reconnects sends Last-Event-ID (or ?from=SEQ) and resumes after it with
// nothing repeated and no must-deliver event missing. ?deltas=false leaves
// the streamed text out. The stream ends with an "end" event once the run
// has ended and everything was sent; a client too slow to keep up is cut
// with an "error" event that says where to resume.
//
// Runs of this process stream live; a finished run's events come from its
// broker's bounded history, or for older runs from its log.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet) {
		return
	}
	info, ok := s.runOr404(w, r)
	if !ok {
		return
	}
	from, e := eventsFrom(r)
	if e != nil {
		writeError(w, e)
		return
	}
	opts := event.SubscribeOptions{From: from}
	if r.URL.Query().Get("deltas") == "false" {
		opts.Skip = event.Deltas
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(name string, id uint64, v any) bool {
		b, _ := json.Marshal(v)
		var err error
		if id > 0 {
			_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, name, b)
		} else {
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		}
		return err == nil && rc.Flush() == nil
	}
	if info.Events == nil {
		s.logEvents(info, from, opts, send)
		return
	}
	sub := info.Events.SubscribeWith(opts)
	defer sub.Close()
	for {
		e, ok := sub.Next(r.Context().Done())
		if !ok {
			break
		}
		if !send(string(e.Type()), e.Head().Seq, event.ToRecord(e)) {
			return // the client went away
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
	send("end", 0, map[string]any{"run": info.ID})
}

// logEvents streams a finished run's events from its log, when the server
// no longer keeps its broker.
func (s *Server) logEvents(info runInfo, from uint64, opts event.SubscribeOptions, send func(string, uint64, any) bool) {
	if info.LogDir == "" {
		send("error", 0, map[string]any{"message": "this run kept no events: it ran without logs and the server has let its history go"})
		return
	}
	f, err := os.Open(filepath.Join(info.LogDir, "coordination_events.jsonl"))
	if err != nil {
		send("error", 0, map[string]any{"message": "the run's event log cannot be read: " + err.Error()})
		return
	}
	defer f.Close()
	// Up to a torn last line (a run killed mid-write): all before it is sent.
	err = runlog.ReadJSONLines(f, func(line []byte) error {
		var rec event.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		if rec.Seq < from || opts.Skip != nil && rec.Type.Droppable() {
			return nil
		}
		rec.V = event.SchemaVersion
		if !send(string(rec.Type), rec.Seq, rec) {
			return errClientGone
		}
		return nil
	})
	if !errors.Is(err, errClientGone) {
		send("end", 0, map[string]any{"run": info.ID})
	}
}

// eventsFrom is the first sequence number a client asks for: after its
// Last-Event-ID, or ?from=, or the start of the run.
func eventsFrom(r *http.Request) (uint64, *Error) {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return 0, &Error{Status: http.StatusBadRequest, Param: "Last-Event-ID", Code: "invalid_event_id", Message: "Last-Event-ID must be an event's sequence number."}
		}
		return n + 1, nil
	}
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, &Error{Status: http.StatusBadRequest, Param: "from", Code: "invalid_event_id", Message: "from must be a sequence number."}
		}
		return n, nil
	}
	return 1, nil
}
