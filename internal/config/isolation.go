package config

import (
	"fmt"
	"slices"
)

// Isolation holds orchestrator.coordination's keys of isolated writes,
// changedocs and fast iteration (internal/workspace/isolate,
// internal/kit/changedoc).
type Isolation struct {
	// WriteMode is write_mode: "" or legacy (the winner writes the real
	// context paths in its final presentation), auto, worktree or
	// isolated (each round writes a copy; the winner's changes are
	// applied at the end).
	WriteMode string
	// DriftPolicy is drift_conflict_policy: skip ("" too),
	// prefer_presenter or fail.
	DriftPolicy string
	// NoChangedoc is enable_changedoc: false; upstream's default is on.
	NoChangedoc bool
	// FastIteration is fast_iteration_mode.
	FastIteration bool
}

// Isolates says whether write_mode asks for isolated copies.
func (i Isolation) Isolates() bool { return i.WriteMode != "" && i.WriteMode != "legacy" }

// isolationKeys are the keys isolation reads.
var isolationKeys = []string{"write_mode", "drift_conflict_policy", "enable_changedoc", "fast_iteration_mode"}

// isolation reads one of isolationKeys. An invalid write_mode or
// drift_conflict_policy is an error, as upstream's validator makes it.
func (d *decoder) isolation(w *Isolation, t *pair, key string) {
	switch t.key {
	case "enable_changedoc":
		if b, ok := d.boolean(key, t); ok {
			w.NoChangedoc = !b
		}
	case "fast_iteration_mode":
		w.FastIteration, _ = d.boolean(key, t)
	case "write_mode", "drift_conflict_policy":
		s, ok := d.str(key, t)
		if !ok {
			return
		}
		valid := writeModes
		if t.key == "drift_conflict_policy" {
			valid = driftPolicies
		}
		if !slices.Contains(valid, s) {
			d.fail(t.val.pos, key, fmt.Sprintf("invalid %s '%s'", t.key, s), oneOf(s, valid))
			return
		}
		if t.key == "write_mode" {
			w.WriteMode = s
		} else {
			w.DriftPolicy = s
		}
	}
}
