package runlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// gapSet is what a run's logs lack: the files a write failed for (a full
// disk, most often), by name in the log directory, with the error. A file
// rewritten whole later (status.json, vote.json…) leaves the set when a
// rewrite succeeds; an appended one (the JSONL logs, the agents' output
// files) stays, as it stopped at its first failure. It has its own mutex:
// the journal fails from Persist, outside the Writer's.
type gapSet struct {
	mu    sync.Mutex
	dir   string
	first error            // the first failure seen, for the message
	files map[string]error // name in the log dir → its failure
}

func newGaps(dir string) *gapSet { return &gapSet{dir: dir, files: map[string]error{}} }

// set records the outcome of writing file (a path): err nil clears it.
func (g *gapSet) set(path string, err error) {
	name := g.name(path)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		delete(g.files, name)
		return
	}
	g.files[name] = err
	if g.first == nil {
		g.first = err
	}
}

// add records every failed write err is made of (errors.Join trees), by
// the file it names.
func (g *gapSet) add(err error) {
	for _, e := range leaves(err) {
		if errors.Is(e, errStopped) || errors.Is(e, ErrClosed) {
			continue // already recorded, or not a write
		}
		path := ""
		var pe *os.PathError
		var le *os.LinkError
		switch {
		case errors.As(e, &le):
			path = le.New
		case errors.As(e, &pe):
			path = pe.Path
		}
		if path == "" {
			path = "?"
		}
		g.set(path, e)
	}
}

// leaves flattens errors.Join trees.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// name is path as a name in the log directory; the temporary file of an
// atomic write (.status.json.tmp) stands for its target.
func (g *gapSet) name(path string) string {
	if rel, err := filepath.Rel(g.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		path = rel
	}
	d, base := filepath.Split(path)
	if strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".tmp") {
		base = strings.TrimSuffix(strings.TrimPrefix(base, "."), ".tmp")
	}
	return filepath.ToSlash(filepath.Join(d, base))
}

// note is the sentence that says the logs are incomplete ("" when they
// are not).
func (g *gapSet) note() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.files) == 0 {
		return ""
	}
	names := make([]string, 0, len(g.files))
	for n := range g.files {
		names = append(names, n)
	}
	// The logs readers parse and the files of the outcome first, then the
	// rest (step files, agent outputs) by name.
	rank := func(n string) int {
		for i, k := range []string{journalName, ReplayName, "massgen.log", "status.json", "vote.json"} {
			if n == k {
				return i
			}
		}
		if strings.HasPrefix(n, "final/") {
			return 5
		}
		return 6
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	const show = 6
	list := strings.Join(names[:min(show, len(names))], ", ")
	if len(names) > show {
		list += fmt.Sprintf(" and %d more", len(names)-show)
	}
	why := g.first
	if why == nil {
		why = g.files[names[0]]
	}
	cause := "a write failed"
	if isNoSpace(why) {
		cause = "the disk was full"
	}
	return fmt.Sprintf("the logs in %s are incomplete (%s: %v): %s not fully written; each log ends at its last whole line",
		g.dir, cause, rootCause(why), list)
}

// rootCause is the innermost error: "no space left on device".
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// IncompleteError is what Close returns when some of the run's files could
// not be written: the run itself went on, and its final status was kept
// if at all possible.
type IncompleteError struct{ Note string }

func (e *IncompleteError) Error() string { return e.Note }
