package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/kit/changedoc"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/isolate"
)

// runIsolation is write_mode's part of a run (internal/workspace/isolate):
// the sessions of copies, by agent (agents with the same write context
// paths share one), and which agents presented (their copies then hold
// the presentation's work).
type runIsolation struct {
	dir       string // <run>.isolate: the bases, massgen's own
	policy    isolate.Policy
	sessions  map[string]*isolate.Session
	all       []*isolate.Session
	mu        sync.Mutex
	presented map[string]bool
}

// writeModeNote is the context paths as an isolating agent's workspace
// note lists them: all read-only (its copies are its to write, and its
// write_mode note says so).
func writeModeNote(cfg *config.Config, cps []workspace.ContextPath) []workspace.ContextPath {
	if !cfg.Orchestrator.Isolation.Isolates() {
		return cps
	}
	out := slices.Clone(cps)
	for i := range out {
		out[i].Write = false
	}
	return out
}

// withChangedoc adds the changedoc section (enable_changedoc, on unless
// turned off, for agents with a workspace) and fast iteration's guidance
// (fast_iteration_mode with checklist-gated voting) to the agents' system
// messages; dirs are the agents' workspaces, view their views.
func withChangedoc(cfg *config.Config, agents []orchestrator.Agent, dirs map[string]string, view func(string) string) []orchestrator.Agent {
	iso := cfg.Orchestrator.Isolation
	fast := iso.FastIteration && cfg.Orchestrator.ChecklistGated
	if iso.NoChangedoc && !fast {
		return agents
	}
	out := slices.Clone(agents)
	for i := range out {
		var add []string
		if dirs[out[i].ID] != "" && !iso.NoChangedoc {
			add = append(add, changedoc.Section(view(out[i].ID)))
		}
		if fast {
			add = append(add, changedoc.FastIteration())
		}
		if len(add) > 0 {
			out[i].SystemMessage = strings.TrimSpace(out[i].SystemMessage + "\n\n" + strings.Join(add, "\n\n"))
		}
	}
	return out
}

// withIsolation gives every agent with write context paths its copies
// (write_mode): a fresh copy per round, laid before each coordination
// turn, and a note saying where they are. out is changed in place (it is
// withWorkspaces' own clone).
func (rw *runWorkspaces) withIsolation(cfg *config.Config, out []orchestrator.Agent) error {
	iso := cfg.Orchestrator.Isolation
	if !iso.Isolates() {
		return nil
	}
	ri := &runIsolation{dir: rw.dir + ".isolate", policy: isolate.Policy(iso.DriftPolicy),
		sessions: map[string]*isolate.Session{}, presented: map[string]bool{}}
	rw.iso = ri
	rw.snaps.annotate = rw.annotate
	byPaths := map[string]*isolate.Session{}
	own := []string{filepath.Dir(filepath.Dir(rw.dir)), rw.snaps.store, rw.snaps.temp}
	skip := func(abs string) bool {
		return slices.ContainsFunc(own, func(o string) bool { return abs == o || strings.HasPrefix(abs, o+string(filepath.Separator)) })
	}
	for i := range out {
		id, ws := out[i].ID, rw.dirs[out[i].ID]
		w := rw.watches[id]
		if ws == "" || w == nil {
			continue // no write context path: nothing to isolate (as upstream)
		}
		key := strings.Join(w.paths, "\x00")
		s := byPaths[key]
		if s == nil {
			var warnings []string
			var err error
			s, warnings, err = isolate.New(context.Background(), filepath.Join(ri.dir, fmt.Sprint(len(ri.all)+1)), isolate.Mode(iso.WriteMode), w.paths, skip)
			if err != nil {
				ri.close()
				return execErr("%v", err)
			}
			rw.warnings = append(rw.warnings, warnings...)
			byPaths[key] = s
			ri.all = append(ri.all, s)
		}
		ri.sessions[id] = s
		out[i].BeforeRound = func() {
			if err := s.Round(ws); err != nil {
				rw.snaps.warn(fmt.Sprintf("agent %s: %v; it works on its last copies", id, err))
			}
		}
		out[i].SystemMessage = strings.TrimSpace(out[i].SystemMessage + "\n\n" + s.Note(ws, rw.snaps.viewDir(id), ri.policy))
	}
	return nil
}

// isolatedPresent is an isolating winner's OnPresent: its copies are laid
// again from the snapshot of its winning answer, for the presentation to
// continue from; the real paths stay closed to it (Apply writes them).
func (rw *runWorkspaces) isolatedPresent(id string) func(on bool) {
	return func(on bool) {
		ri := rw.iso
		if !on || ri == nil || ri.sessions[id] == nil {
			return
		}
		rw.snaps.mu.Lock()
		snap := rw.snaps.latest[id]
		rw.snaps.mu.Unlock()
		if err := ri.sessions[id].Reset(rw.dirs[id], snap); err != nil {
			rw.snaps.warn(fmt.Sprintf("agent %s: %v", id, err))
		}
		ri.mu.Lock()
		ri.presented[id] = true
		ri.mu.Unlock()
	}
}

// annotate writes the diff of each of agent's copies beside them in its
// snapshot dir, just taken, before any agent is shown it.
func (rw *runWorkspaces) annotate(agent, dir string) error {
	if s := rw.iso.sessions[agent]; s != nil {
		return s.Annotate(context.Background(), dir, rw.dirs[agent])
	}
	return nil
}

// applyIsolated applies the winner's changes to the real context paths at
// the end of the run, through its Guard opened for that moment and under
// its watch (the originals backed up in the logs, every change listed),
// then removes the bases. What it did is added to the watch's notes.
func (rw *runWorkspaces) applyIsolated(winner string) {
	ri := rw.iso
	if ri == nil {
		return
	}
	defer ri.close()
	s, g, w := ri.sessions[winner], rw.guards[winner], rw.watches[winner]
	if winner == "" || s == nil || g == nil || w == nil {
		return
	}
	ri.mu.Lock()
	presented := ri.presented[winner]
	ri.mu.Unlock()
	src := ""
	if presented {
		// The presenter's copies as the presentation left them, copied
		// out of its reach first.
		src = filepath.Join(ri.dir, "final")
		if err := s.Keep(rw.dirs[winner], src); err != nil {
			w.note(fmt.Sprintf("write_mode: nothing applied: the copies of %s could not be read: %v", winner, err))
			return
		}
	} else {
		rw.snaps.mu.Lock()
		src = rw.snaps.latest[winner]
		rw.snaps.mu.Unlock()
	}
	if src == "" {
		return
	}
	w.start(winner)
	g.SetFinalPresentation(true)
	res, err := s.Apply(src, g, ri.policy)
	g.SetFinalPresentation(false)
	w.stop(winner)
	w.refused(g.Reverted())
	if err != nil {
		w.note("write_mode: " + err.Error())
		rw.snaps.warn(err.Error())
		return
	}
	for _, r := range res {
		w.note(applyNotes(winner, ri.policy, r)...)
		if r.Failed {
			rw.snaps.warn(fmt.Sprintf("write_mode: none of %s's changes to %s were applied: %d file(s) changed there since the run began "+
				"(drift_conflict_policy: fail); its copies are in the logs with its answer", winner, r.Context, len(r.Drifted)))
		}
	}
}

// applyNotes say what Apply did to one context path.
func applyNotes(winner string, policy isolate.Policy, r isolate.Result) []string {
	var out []string
	paths := func(chs []isolate.Change) string {
		var ps []string
		for _, c := range chs {
			ps = append(ps, c.Path)
		}
		return strings.Join(ps, ", ")
	}
	if r.Failed {
		return append(out, fmt.Sprintf("write_mode: nothing applied to %s: changed there since the run began (drift_conflict_policy: fail): %s", r.Context, paths(r.Drifted)))
	}
	if r.Missing {
		return append(out, fmt.Sprintf("write_mode: nothing applied to %s: %s's copy of it was gone (removed, or not a directory) at the end", r.Context, winner))
	}
	if len(r.Applied) > 0 {
		out = append(out, fmt.Sprintf("write_mode: applied %d change(s) of %s's copy to %s", len(r.Applied), winner, r.Context))
	}
	if len(r.Drifted) > 0 {
		verb := "left as the user has them (drift_conflict_policy: skip)"
		if policy == isolate.PreferPresenter {
			verb = "overwritten with the winner's (drift_conflict_policy: prefer_presenter)"
		}
		out = append(out, fmt.Sprintf("write_mode: changed in %s since the run began, %s: %s", r.Context, verb, paths(r.Drifted)))
	}
	for _, c := range r.Refused {
		out = append(out, fmt.Sprintf("write_mode: not applied %s: %s", filepath.Join(r.Context, c.Path), c.Why))
	}
	return out
}

// note adds lines to the watch's report.
func (w *contextWatch) note(lines ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.notes = append(w.notes, lines...)
}

func (ri *runIsolation) close() {
	for _, s := range ri.all {
		s.Close()
	}
	ri.all = nil
	os.RemoveAll(ri.dir)
}
