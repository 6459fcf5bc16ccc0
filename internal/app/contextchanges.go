package app

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/workspace"
)

// Bounds of the watch over write context paths during a presentation.
const (
	maxBackup     = 200 << 20 // bytes copied aside before the presentation
	maxWatched    = 100_000   // files fingerprinted per context path
	maxHashedSize = 8 << 20   // larger files are compared by size and time only
)

// contextWatch keeps, for the winner's final presentation, what its write
// context paths held before (a copy in the log directory, so the user can
// undo) and lists what changed, whoever changed it: the file tools or a
// command.
type contextWatch struct {
	paths []string // the write context paths, real
	mu    sync.Mutex
	// set by the run before it starts; "" without logs (no backup then)
	logDir string
	before []map[string]fileSig
	notes  []string // what changed, then how to undo
}

type fileSig struct {
	size int64
	mod  time.Time
	sum  [32]byte
}

func newContextWatch(cps []workspace.ContextPath) *contextWatch {
	w := &contextWatch{}
	for _, cp := range cps {
		if cp.Write {
			if r, err := filepath.EvalSymlinks(cp.Path); err == nil {
				w.paths = append(w.paths, r)
			}
		}
	}
	return w
}

// start fingerprints the write context paths and copies them aside.
func (w *contextWatch) start(agent string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.before = nil
	for i, p := range w.paths {
		w.before = append(w.before, fingerprint(p))
		if w.logDir == "" {
			continue
		}
		dst := filepath.Join(w.logDir, "final", safeName(agent), "context_backup", strconv.Itoa(i+1)+"_"+filepath.Base(p))
		if err := backup(p, dst); err != nil {
			w.notes = append(w.notes, fmt.Sprintf("no backup of %s: %v", p, err))
		}
	}
}

// stop lists what changed in the write context paths since start.
func (w *contextWatch) stop(agent string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, p := range w.paths {
		if i >= len(w.before) {
			break
		}
		after := fingerprint(p)
		var changed []string
		for rel, sig := range after {
			old, ok := w.before[i][rel]
			switch {
			case !ok:
				changed = append(changed, "added    "+filepath.Join(p, rel))
			case old != sig:
				changed = append(changed, "modified "+filepath.Join(p, rel))
			}
		}
		for rel := range w.before[i] {
			if _, ok := after[rel]; !ok {
				changed = append(changed, "deleted  "+filepath.Join(p, rel))
			}
		}
		slices.Sort(changed)
		w.notes = append(w.notes, changed...)
		if len(changed) > 0 && w.logDir != "" {
			w.notes = append(w.notes, fmt.Sprintf("the originals of %s are in %s", p,
				filepath.Join(w.logDir, "final", safeName(agent), "context_backup", strconv.Itoa(i+1)+"_"+filepath.Base(p))))
		}
	}
}

// changes are the notes gathered so far.
func (w *contextWatch) changes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.notes)
}

// skipWatch are directories neither fingerprinted nor backed up: version
// control and dependencies (large, protected or rebuilt) and massgen's own
// (workspaces, logs, the backup itself).
var skipWatch = map[string]bool{".git": true, "node_modules": true, ".massgen": true}

// fingerprint maps the regular files under dir (relative paths) to their
// signatures; skipWatch directories are left out.
func fingerprint(dir string) map[string]fileSig {
	out := map[string]fileSig{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && skipWatch[d.Name()] {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() || len(out) >= maxWatched {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		sig := fileSig{size: info.Size(), mod: info.ModTime()}
		if info.Size() <= maxHashedSize {
			if f, err := os.Open(p); err == nil {
				h := sha256.New()
				io.Copy(h, f)
				f.Close()
				copy(sig.sum[:], h.Sum(nil))
			}
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sig
		return nil
	})
	return out
}

// backup copies the regular files of src to dst, up to maxBackup bytes.
func backup(src, dst string) error {
	var total int64
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipWatch[d.Name()] {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > maxBackup {
			return fmt.Errorf("it holds more than %d MB; the backup is partial", maxBackup>>20)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return copyFile(p, target, info.Mode().Perm())
	})
}
