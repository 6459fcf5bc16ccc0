package app

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/runlog"
)

// LogsRoot is where runs log unless --log-dir says otherwise.
func LogsRoot(workDir, logDir string) string {
	if logDir != "" {
		if !filepath.IsAbs(logDir) {
			logDir = filepath.Join(workDir, logDir)
		}
		return logDir
	}
	return filepath.Join(workDir, ".massgen", "massgen_logs")
}

// PastRun is one run found under the logs root: a log_<timestamp>/
// directory, or a session turn's turn_<N>/ inside one.
type PastRun struct {
	Name   string // relative to the root: log_…, or log_…/turn_N
	Dir    string
	Status runlog.StatusView
	// State is the status, or "died" for a run still "running" whose
	// process is gone.
	State string
}

// Duration is how long the run took (so far).
func (r PastRun) Duration() time.Duration {
	return time.Duration(r.Status.Meta.ElapsedSeconds * float64(time.Second))
}

// PastRuns lists the runs under root, newest first. Directories without a
// readable status.json are skipped: they are not runs (a session's own
// directory) or were cut before their first write.
func PastRuns(root string) ([]PastRun, error) {
	var dirs []string
	for _, pattern := range []string{"log_*", filepath.Join("log_*", "turn_*")} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, m...)
	}
	var runs []PastRun
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, "status.json"))
		if err != nil {
			continue
		}
		var v runlog.StatusView
		if json.Unmarshal(data, &v) != nil {
			continue
		}
		name, _ := filepath.Rel(root, d)
		state := v.Meta.Status
		if runlog.Dead(v) {
			state = "died"
		}
		runs = append(runs, PastRun{Name: filepath.ToSlash(name), Dir: d, Status: v, State: state})
	}
	slices.SortFunc(runs, func(a, b PastRun) int {
		if c := b.Status.Meta.StartedAt.Compare(a.Status.Meta.StartedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.Name, a.Name)
	})
	return runs, nil
}

// FindRun resolves what a user calls a run: "latest" (or ""), a directory
// path, a name PastRuns gives, or an unambiguous prefix of one (the
// timestamp suffices: 20261203_0215).
func FindRun(root, name string) (PastRun, error) {
	runs, err := PastRuns(root)
	if err != nil {
		return PastRun{}, err
	}
	if len(runs) == 0 {
		return PastRun{}, usageErr("no runs under %s", root)
	}
	if name == "" || name == "latest" {
		return runs[0], nil
	}
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		abs, _ := filepath.Abs(name)
		for _, r := range runs {
			if a, _ := filepath.Abs(r.Dir); a == abs {
				return r, nil
			}
		}
		return PastRun{}, usageErr("%s is not a run's log directory under %s (it has no status.json there)", name, root)
	}
	var found []PastRun
	for _, r := range runs {
		if r.Name == name {
			return r, nil
		}
		if strings.HasPrefix(r.Name, name) || strings.HasPrefix(strings.TrimPrefix(r.Name, "log_"), name) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return PastRun{}, usageErr("no run %q under %s (massgen logs list shows them)", name, root)
	case 1:
		return found[0], nil
	}
	var names []string
	for _, r := range found {
		names = append(names, r.Name)
	}
	// A session's directory prefixes its turns: its top-level run wins.
	if strings.HasPrefix(found[len(found)-1].Name, name) && !strings.Contains(found[len(found)-1].Name, "/") {
		top := found[len(found)-1]
		all := true
		for _, r := range found {
			all = all && strings.HasPrefix(r.Name, top.Name)
		}
		if all {
			return top, nil
		}
	}
	return PastRun{}, usageErr("%q matches several runs: %s", name, strings.Join(names, ", "))
}

// ReadEvents reads a run's coordination_events.jsonl (one event record per
// line, appended as the run went, so a run that died has them too). A
// last line cut short (the process died, or the disk filled, in the middle
// of it) is left out, and short says so: the events end early. A line
// that is not an event elsewhere is skipped, and counted in short too.
func ReadEvents(dir string) (recs []event.Record, short string, err error) {
	f, err := os.Open(filepath.Join(dir, "coordination_events.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s has no coordination_events.jsonl", dir)
	} else if err != nil {
		return nil, "", err
	}
	defer f.Close()
	bad := 0
	err = runlog.ReadJSONLines(f, func(line []byte) error {
		var r event.Record
		if json.Unmarshal(line, &r) != nil {
			bad++ // an older massgen could leave a torn line mid-file
			return nil
		}
		recs = append(recs, r)
		return nil
	})
	var notes []string
	if errors.Is(err, runlog.ErrEndsEarly) {
		notes = append(notes, fmt.Sprintf("the events end early: the last line of coordination_events.jsonl was cut short (after %d events)", len(recs)))
		err = nil
	}
	if bad > 0 {
		notes = append(notes, fmt.Sprintf("%d lines of coordination_events.jsonl are not events and were skipped", bad))
	}
	return recs, strings.Join(notes, "; "), err
}
