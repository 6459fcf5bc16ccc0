package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/workspace"
)

// maxSnapshot caps the bytes of one snapshot of a workspace.
const maxSnapshot int64 = 1 << 30

// snapshots keep each agent's files as they were with each of its answers
// and give every agent a read-only view of the others' latest ones.
//
// A snapshot is an independent copy (a reflink where the file system can,
// bytes otherwise), because a command may change a live file in place; it
// is never changed afterwards, so every further copy of it (each agent's
// view, the logs) is hard links. A snapshot is taken on the run's loop
// goroutine, while its author waits for the verdict on its answer; a view
// is laid out by the turn about to start, in its own goroutine (the
// orchestrator runs one layout per agent at a time), so agents' layouts
// may run at once and beside a snapshot.
type snapshots struct {
	store string            // <snapshot_storage>/<run>: <agent>/<n>/ per answer
	temp  string            // <agent_temporary_workspace>/<run>: <viewer>/agentN/
	live  map[string]string // agent → its workspace
	now   func() time.Time

	count map[string]int // the loop's alone
	// annotate, when set, adds to a snapshot just taken, before any view
	// may show it (write_mode's diffs, isolation.go).
	annotate func(agent, dir string) error

	mu       sync.Mutex        // guards what the loop shares with the turns, setLogDir and finish
	latest   map[string]string // agent → its latest snapshot
	logDir   string
	mappings map[string]snapshotMapping
	warnings []string
}

// snapshotMapping is one entry of snapshot_mappings.json (upstream's file,
// keyed by the answer's label): what was snapshotted from where.
type snapshotMapping struct {
	Type      string `json:"type"`
	Label     string `json:"label"`
	AgentID   string `json:"agent_id"`
	Timestamp string `json:"timestamp"`
	Source    string `json:"source"` // the live workspace
	Path      string `json:"path"`   // the snapshot
	Files     int    `json:"files"`
	Bytes     int64  `json:"bytes"`
}

// dirUnder is value under .massgen/ when relative (as upstream relocates
// it), def when empty.
func dirUnder(workDir, value, def string) string {
	if value == "" {
		value = def
	}
	if filepath.IsAbs(value) {
		return value
	}
	if rel := filepath.Clean(value); rel == ".massgen" || len(rel) > 9 && rel[:9] == ".massgen/" {
		return filepath.Join(workDir, rel)
	}
	return filepath.Join(workDir, ".massgen", value)
}

// viewDir is the directory where viewer finds the others' snapshots.
func (s *snapshots) viewDir(viewer string) string { return filepath.Join(s.temp, safeName(viewer)) }

// take snapshots agent's workspace for its answer label and returns the
// snapshot's directory; "" when the workspace is empty (as upstream) or the
// snapshot failed, which is said as a warning: the others then keep seeing
// the agent's previous snapshot.
func (s *snapshots) take(agent, label string) string {
	src := s.live[agent]
	if src == "" {
		return ""
	}
	if ents, err := os.ReadDir(src); err != nil || len(ents) == 0 {
		return ""
	}
	s.count[agent]++
	dst := filepath.Join(s.store, safeName(agent), fmt.Sprint(s.count[agent]))
	st, err := s.copy(src, dst, workspace.Clone)
	if err != nil {
		os.RemoveAll(dst)
		s.warn(fmt.Sprintf("agent %s: the workspace was not snapshotted with answer %s (%v); "+
			"the other agents keep seeing its previous snapshot", agent, label, err))
		return ""
	}
	if s.annotate != nil {
		if err := s.annotate(agent, dst); err != nil {
			s.warn(fmt.Sprintf("agent %s: answer %s: %v", agent, label, err))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latest[agent] = dst
	s.mappings[label] = snapshotMapping{Type: "answer", Label: label, AgentID: agent,
		Timestamp: s.now().UTC().Format(time.RFC3339Nano), Source: src, Path: dst, Files: st.Files, Bytes: st.Bytes}
	if s.logDir != "" {
		if err := s.writeMappings(); err != nil {
			s.warnings = append(s.warnings, "writing snapshot_mappings.json: "+err.Error())
		}
	}
	return dst
}

func (s *snapshots) copy(src, dst string, mode workspace.CopyMode) (workspace.CopyStats, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return workspace.CopyStats{}, err
	}
	st, err := workspace.CopyTree(src, dst, mode, maxSnapshot)
	if errors.Is(err, workspace.ErrTooLarge) {
		err = fmt.Errorf("it holds more than %d MiB, the snapshot size cap; keep large files out of the workspace", maxSnapshot>>20)
	}
	return st, err
}

// show lays out viewer's view before one of its turns: the latest snapshot
// of each shown answer's author under the answer's anonymous label, the
// one its prompt uses (agent1, agent2…), its own included as upstream does.
// Labels move as agents answer, so the view is rebuilt every time.
func (s *snapshots) show(viewer string, shown []coord.Answer) {
	dir := s.viewDir(viewer)
	keep := map[string]bool{}
	for _, a := range shown {
		s.mu.Lock()
		snap := s.latest[a.Agent]
		s.mu.Unlock()
		if snap == "" {
			continue
		}
		keep[a.Label] = true
		next := filepath.Join(dir, "."+a.Label+".next")
		os.RemoveAll(next)
		if _, err := s.copy(snap, next, workspace.Link); err != nil {
			os.RemoveAll(next)
			s.warn(fmt.Sprintf("agent %s: cannot show it %s's files: %v", viewer, a.Label, err))
			continue
		}
		old := filepath.Join(dir, a.Label)
		os.RemoveAll(old)
		if err := os.Rename(next, old); err != nil {
			s.warn(fmt.Sprintf("agent %s: cannot show it %s's files: %v", viewer, a.Label, err))
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !keep[e.Name()] {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

func (s *snapshots) warn(msg string) {
	s.mu.Lock()
	s.warnings = append(s.warnings, msg)
	s.mu.Unlock()
}

func (s *snapshots) setLogDir(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logDir = dir
}

// writeMappings writes snapshot_mappings.json in the log directory; s.mu held.
func (s *snapshots) writeMappings() error {
	data, err := json.MarshalIndent(s.mappings, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(s.logDir, "snapshot_mappings.json")
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// drain returns the warnings gathered so far and forgets them.
func (s *snapshots) drain() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.warnings
	s.warnings = nil
	return w
}
