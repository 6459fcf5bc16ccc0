package server

import (
	"context"
	"encoding/json"
)

// logDir is the log directory of kept response id's run, from the massgen
// object of its Response ("" unknown): the Runner carries the filesystem
// memory of that run's winner into the next turn.
func (k *responseStore) logDir(ctx context.Context, id string) string {
	obj, ok, _ := k.object(ctx, id)
	if !ok {
		return ""
	}
	var r struct {
		Massgen *struct {
			LogDir string `json:"log_dir"`
		} `json:"massgen"`
	}
	if json.Unmarshal(obj, &r) != nil || r.Massgen == nil {
		return ""
	}
	return r.Massgen.LogDir
}
