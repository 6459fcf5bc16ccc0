package app

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/workspace"
)

// Bounds of the watch over write context paths during a presentation.
const (
	maxBackup     = 200 << 20 // bytes copied aside before the presentation
	maxWatched    = 100_000   // entries fingerprinted per context path
	maxHashedSize = 8 << 20   // larger files are compared by size and time only
)

// contextWatch keeps, for the winner's final presentation, what its write
// context paths held before (a copy in the log directory, so the user can
// undo) and lists what changed, whoever changed it: the file tools or a
// command. Every kind of entry is watched, hidden ones, .git and .massgen
// included: files (content and mode), directories (mode), symbolic links
// (their target, never followed), pipes, sockets, devices, mount points
// (not entered). Only the run's own files are left out (its logs, with the
// backup; its workspaces and snapshots; the sessions database), since the
// run itself writes them while the presenter works.
type contextWatch struct {
	paths []string // the write context paths, real
	own   []string // the run's own directories and files, left out
	mu    sync.Mutex
	// set by the run before it starts; "" without logs (no backup then)
	logDir string
	before []map[string]entrySig
	notes  []string // what changed, then how to undo
}

// entrySig is what an entry was: its type and mode; a file's size, time
// and content hash; a link's target.
type entrySig struct {
	mode   fs.FileMode
	size   int64
	mod    time.Time
	sum    [32]byte
	target string
	mount  bool
}

func newContextWatch(cps []workspace.ContextPath, own ...string) *contextWatch {
	w := &contextWatch{own: own}
	for _, cp := range cps {
		if cp.Write {
			if r, err := filepath.EvalSymlinks(cp.Path); err == nil {
				w.paths = append(w.paths, r)
			}
		}
	}
	return w
}

// ownPaths are the run's own paths, real where they exist; w.mu held.
func (w *contextWatch) ownPaths() []string {
	var out []string
	for _, p := range append(slices.Clone(w.own), w.logDir) {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, p)
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, r)
		}
	}
	return out
}

// skipOwn says whether rel, under the context path p, is one of the run's
// own paths or inside one.
func skipOwn(p string, own []string) func(rel string) bool {
	return func(rel string) bool {
		full := filepath.Join(p, rel)
		for _, o := range own {
			if full == o || strings.HasPrefix(full, o+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
}

func (w *contextWatch) backupDir(agent string, i int) string {
	p := w.paths[i]
	return filepath.Join(w.logDir, "final", safeName(agent), "context_backup", strconv.Itoa(i+1)+"_"+filepath.Base(p))
}

// start fingerprints the write context paths and copies them aside.
func (w *contextWatch) start(agent string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.before = nil
	own := w.ownPaths()
	for i, p := range w.paths {
		sigs, notes := fingerprint(p, skipOwn(p, own))
		w.before = append(w.before, sigs)
		w.notes = append(w.notes, notes...)
		if w.logDir == "" {
			continue
		}
		if err := backup(p, w.backupDir(agent, i), skipOwn(p, own)); err != nil {
			w.notes = append(w.notes, fmt.Sprintf("no backup of %s: %v", p, err))
		}
	}
}

// stop lists what changed in the write context paths since start.
func (w *contextWatch) stop(agent string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	own := w.ownPaths()
	for i, p := range w.paths {
		if i >= len(w.before) {
			break
		}
		after, notes := fingerprint(p, skipOwn(p, own))
		w.notes = append(w.notes, notes...)
		changed, unsaved := diffSigs(p, w.before[i], after)
		w.notes = append(w.notes, changed...)
		if len(changed) > 0 && w.logDir != "" {
			w.notes = append(w.notes, fmt.Sprintf("the originals of %s are in %s", p, w.backupDir(agent, i)))
			if unsaved {
				w.notes = append(w.notes, "(what was in .git and node_modules directories, and symbolic links, is listed but not in the backup)")
			}
		}
	}
}

// refused adds the protected entries the guard removed during the
// presentation (a command or server made them): they are gone from the
// tree, so the comparison cannot show them, and the user should know
// they were tried.
func (w *contextWatch) refused(gone []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range gone {
		w.notes = append(w.notes, "refused  "+p+" (protected: made during the presentation and removed)")
	}
}

// changes are the notes gathered so far.
func (w *contextWatch) changes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.notes)
}

// kind names an entry's type for the report.
func (e entrySig) kind() string {
	switch t := e.mode.Type(); {
	case e.mount:
		return "a mount point"
	case t == 0:
		return "a file"
	case t == fs.ModeDir:
		return "a directory"
	case t == fs.ModeSymlink:
		return "a link -> " + e.target
	case t&fs.ModeNamedPipe != 0:
		return "a pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	default:
		return "a device"
	}
}

// show is the path of an entry as listed: a directory with a trailing
// separator, a link with its target, anything else but a file with its kind.
func (e entrySig) show(path string) string {
	switch t := e.mode.Type(); {
	case e.mount:
		return path + string(filepath.Separator) + " (a mount point, not watched inside)"
	case t == 0:
		return path
	case t == fs.ModeDir:
		return path + string(filepath.Separator)
	case t == fs.ModeSymlink:
		return path + " -> " + e.target
	default:
		return path + " (" + e.kind() + ")"
	}
}

func perm(m fs.FileMode) string {
	return fmt.Sprintf("%04o", uint32(m.Perm())|special(m))
}

func special(m fs.FileMode) uint32 {
	var s uint32
	if m&fs.ModeSetuid != 0 {
		s |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		s |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		s |= 0o1000
	}
	return s
}

// diffSigs lists, sorted by path, every entry added, deleted, modified,
// replaced by another kind, or whose mode changed, under p; unsaved says
// whether one of them is something the backup leaves out.
func diffSigs(p string, before, after map[string]entrySig) (lines []string, unsaved bool) {
	rels := map[string]bool{}
	for rel := range before {
		rels[rel] = true
	}
	for rel := range after {
		rels[rel] = true
	}
	sorted := make([]string, 0, len(rels))
	for rel := range rels {
		sorted = append(sorted, rel)
	}
	slices.Sort(sorted)
	for _, rel := range sorted {
		old, had := before[rel]
		cur, has := after[rel]
		path := filepath.Join(p, rel)
		n := len(lines)
		switch {
		case !had:
			lines = append(lines, "added    "+cur.show(path))
		case !has:
			lines = append(lines, "deleted  "+old.show(path))
		case old.mode.Type() != cur.mode.Type() || old.mount != cur.mount:
			lines = append(lines, "replaced "+path+" ("+old.kind()+", now "+cur.kind()+")")
		default:
			if old.target != cur.target {
				lines = append(lines, "modified "+path+" -> "+cur.target+" (was -> "+old.target+")")
			}
			if old.size != cur.size || !old.mod.Equal(cur.mod) || old.sum != cur.sum {
				lines = append(lines, "modified "+path)
			}
			if old.mode != cur.mode && old.mode.Type() != fs.ModeSymlink {
				lines = append(lines, "mode     "+old.show(path)+" "+perm(old.mode)+" -> "+perm(cur.mode))
			}
		}
		if len(lines) > n && !unsaved {
			unsaved = notBackedUp(rel) || old.mode.Type() == fs.ModeSymlink || cur.mode.Type() == fs.ModeSymlink
		}
	}
	return lines, unsaved
}

// noBackup are directories the backup leaves out, at any depth: version
// control and dependencies, large and restored by their own tools. The
// report lists their changes all the same.
var noBackup = map[string]bool{".git": true, "node_modules": true}

func notBackedUp(rel string) bool {
	for part := range strings.SplitSeq(rel, string(filepath.Separator)) {
		if noBackup[part] {
			return true
		}
	}
	return false
}

// fingerprint maps every entry under dir (relative paths) but the skipped
// ones to its signature. It walks by directory descriptors
// (workspace.WalkTree): a link is described, never followed, and a file is
// hashed from a descriptor opened without following. notes say what could
// not be watched.
func fingerprint(dir string, skip func(rel string) bool) (map[string]entrySig, []string) {
	out := map[string]entrySig{}
	var notes []string
	err := workspace.WalkTree(dir, func(rel string, e *workspace.TreeEntry) error {
		if skip != nil && skip(rel) {
			if e.Mode.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if len(out) >= maxWatched {
			notes = append(notes, fmt.Sprintf("%s holds more than %d entries: changes past them (by name) are not listed", dir, maxWatched))
			return fs.SkipAll
		}
		sig := entrySig{mode: e.Mode, target: e.Target, mount: e.Mount}
		if e.Mode.IsRegular() {
			sig.size, sig.mod = e.Size, e.ModTime
			if e.Size <= maxHashedSize {
				if f, err := e.Open(); err == nil {
					h := sha256.New()
					io.Copy(h, f)
					f.Close()
					copy(sig.sum[:], h.Sum(nil))
				}
			}
		}
		out[rel] = sig
		return nil
	})
	if err != nil {
		notes = append(notes, fmt.Sprintf("%s was not watched in full: %v", dir, err))
	}
	return out, notes
}

// backup copies the directories and regular files of src to dst, up to
// maxBackup bytes, by the same walk as snapshots (workspace.CopyTree: no
// link followed, no mount crossed); skipped paths and noBackup directories
// are left out. A second presentation keeps the first backup, the
// earliest originals.
func backup(src, dst string, skip func(rel string) bool) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	_, err := workspace.CopyTreeWith(src, dst, workspace.CopyOptions{Mode: workspace.Clone, Limit: maxBackup,
		Skip: func(rel string, dir bool) bool {
			return skip(rel) || dir && noBackup[filepath.Base(rel)]
		}})
	if errors.Is(err, workspace.ErrTooLarge) {
		return fmt.Errorf("it holds more than %d MB; the backup is partial", maxBackup>>20)
	}
	return err
}
