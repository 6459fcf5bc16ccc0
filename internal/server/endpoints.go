package server

// The routes that read state: health, the model list, and a run's status.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/massgen/massgen/internal/runlog"
)

// GET /health
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	running, queued := s.adm.load()
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "service": "massgen-server", "version": s.d.Version,
		"running": running, "queued": queued})
}

// GET /v1/models
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet) {
		return
	}
	ids := s.modelIDs()
	list := modelList{Object: "list", Data: make([]modelObject, 0, len(ids))}
	for _, id := range ids {
		list.Data = append(list.Data, s.modelObject(id))
	}
	writeJSON(w, http.StatusOK, list)
}

// GET /v1/models/{id}
func (s *Server) model(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet) {
		return
	}
	id := r.PathValue("id")
	if !slices.Contains(s.modelIDs(), id) {
		writeError(w, NewError(http.StatusNotFound, "model_not_found", "The model '%s' does not exist.", id))
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject(id))
}

// modelIDs are Deps.Models, or "massgen" and the configs of the moment.
func (s *Server) modelIDs() []string {
	if s.d.Models != nil {
		return s.d.Models
	}
	return append([]string{DefaultModel}, slices.Sorted(maps.Keys(s.d.ConfigSource()))...)
}

func (s *Server) modelObject(id string) modelObject {
	return modelObject{ID: id, Object: "model", Created: s.created, OwnedBy: "massgen"}
}

// GET /v1/runs/{id}: the run's state in status.json's shape, from the
// run's view in memory (runs of this process, logs or not); for a run
// without one, its status.json, or a summary of what the registry knows.
func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet) {
		return
	}
	info, ok := s.runOr404(w, r)
	if !ok {
		return
	}
	if info.View != nil {
		now := s.d.Now()
		writeJSON(w, http.StatusOK, runlog.StatusOf(info.View.Snapshot(now), info.LogDir, now, runlog.ThisProcess()))
		return
	}
	if info.LogDir != "" {
		if b, err := os.ReadFile(filepath.Join(info.LogDir, "status.json")); err == nil && json.Valid(b) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return
		}
	}
	v := runlog.StatusView{
		Meta:    runlog.StatusMeta{LogDir: info.LogDir, StartedAt: info.Created, UpdatedAt: s.d.Now(), Status: info.Status},
		Results: runlog.ResultsView{Winner: info.Winner},
	}
	writeJSON(w, http.StatusOK, v)
}

// runOr404 is the run the path's {id} names, or a 404 written to w.
func (s *Server) runOr404(w http.ResponseWriter, r *http.Request) (runInfo, bool) {
	info, ok := s.runs.get(r.PathValue("id"))
	if !ok {
		writeError(w, NewError(http.StatusNotFound, "run_not_found", "No run with id '%s' (unknown, or forgotten: the server keeps the latest %d finished runs).",
			r.PathValue("id"), s.d.KeepRuns))
	}
	return info, ok
}

// GET and DELETE /v1/responses/{id}: a kept Response (made with store:
// true), as it was sent; and forgetting it, in memory and in the database.
func (s *Server) keptResponse(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet, http.MethodDelete) {
		return
	}
	id := r.PathValue("id")
	notFound := func() { writeError(w, s.responseNotFound(id)) }
	if r.Method == http.MethodDelete {
		found, e := s.kept.remove(r.Context(), id)
		switch {
		case e != nil:
			writeError(w, e)
		case !found:
			notFound()
		default:
			writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "response", "deleted": true})
		}
		return
	}
	obj, ok, e := s.kept.object(r.Context(), id)
	switch {
	case e != nil:
		writeError(w, e)
	case !ok:
		notFound()
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(obj)
	}
}

// responseNotFound is the 404 of a response id that is not kept.
func (s *Server) responseNotFound(id string) *Error {
	return &Error{Status: http.StatusNotFound, Param: "response_id", Code: "response_not_found",
		Message: fmt.Sprintf("Response with id '%s' not found (massgen keeps the latest responses made with store: true: %s).", id, s.keptWhere())}
}

// keptWhere says where responses are kept, for "not found" errors.
func (s *Server) keptWhere() string {
	if s.d.Responses == nil {
		return fmt.Sprintf("the latest %d, in memory", s.d.KeepResponses)
	}
	age := s.d.StoredAge.String()
	if days := s.d.StoredAge / (24 * time.Hour); days > 0 && s.d.StoredAge%(24*time.Hour) == 0 {
		age = fmt.Sprintf("%d days", days)
	}
	return fmt.Sprintf("up to %d for %s, in %s", s.d.StoredResponses, age, s.d.Responses.Path())
}
