package server

// The routes that read state: health, the model list, and a run's status.

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"

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
	info, ok := s.runs.get(r.PathValue("id"))
	if !ok {
		writeError(w, NewError(http.StatusNotFound, "run_not_found", "No run with id '%s' (unknown, or forgotten: the server keeps the latest %d finished runs).",
			r.PathValue("id"), s.d.KeepRuns))
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
