package isolate

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/massgen/massgen/internal/workspace"
)

// Policy is coordination.drift_conflict_policy.
type Policy string

// Policies (upstream's three).
const (
	Skip            Policy = "skip"             // leave drifted files as the user has them; apply the rest
	PreferPresenter Policy = "prefer_presenter" // overwrite drifted files with the winner's
	Fail            Policy = "fail"             // apply nothing when any file drifted
)

// maxApply bounds one file applied.
const maxApply = 256 << 20

// Writer is what Apply writes the real context paths through: the
// winner's Guard with its final presentation open, so protected paths and
// names are refused as they are to a presenter.
type Writer interface {
	Peek(p string, max int64) ([]byte, int64, string, error)
	ReadFile(p string, max int64) ([]byte, int64, string, error)
	WriteFile(p string, data []byte) (string, bool, error)
	Remove(p string) (string, error)
}

// Result is what Apply did to one context path.
type Result struct {
	Context string   // the real context path
	Applied []Change // written or deleted
	Drifted []Change // changed by someone else since the run began
	Refused []Change // never applied, or refused by the Writer (Why)
	// Failed is set under Fail when any file drifted: nothing was applied.
	Failed bool
	// Missing is set when the winner's copy was not there (it removed it,
	// or swapped it for a link): nothing was applied.
	Missing bool
}

// Keep copies the copies of the live workspace ws into dst (massgen's own,
// not existing yet) for Apply, with what the copy leaves out listed beside
// each one: the presenter's work as it ended, which its processes can no
// longer change.
func (s *Session) Keep(ws, dst string) error {
	if _, err := workspace.CopyTreeWith(ws, dst, workspace.CopyOptions{Mode: workspace.Clone, Limit: int64(len(s.ctxs)+1) * MaxBytes,
		Skip: func(rel string, dir bool) bool {
			top, _, _ := cutSep(rel)
			return top != Dir
		}}); err != nil {
		return err
	}
	for _, c := range s.ctxs {
		if err := keepRefused(c.Tree(ws), c.Tree(dst)); err != nil {
			return err
		}
		s.mu.Lock()
		carried := s.carried[c.Tree(ws)]
		s.mu.Unlock()
		if fi, err := os.Lstat(c.Tree(dst)); len(carried) == 0 || err != nil || !fi.IsDir() {
			continue
		}
		// What the answer's copy held that its snapshot could not carry
		// (the presentation continued from that snapshot) is reported too.
		f, err := os.OpenFile(c.Tree(dst)+".refused", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(carried)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func cutSep(rel string) (string, string, bool) {
	for i := 0; i < len(rel); i++ {
		if os.IsPathSeparator(rel[i]) {
			return rel[:i], rel[i+1:], true
		}
	}
	return rel, "", false
}

// Apply writes the changes of the copies held by src (a snapshot or a Keep
// of the winner's workspace: massgen's own) into the real context paths
// through w, deciding drift by policy (the empty policy is Skip).
func (s *Session) Apply(src string, w Writer, policy Policy) ([]Result, error) {
	if policy == "" {
		policy = Skip
	}
	type plan struct {
		c       *Context
		changes []Change
		drifted map[string]bool
	}
	var plans []plan
	drifts := 0
	results := make([]Result, len(s.ctxs))
	for i, c := range s.ctxs {
		results[i].Context = c.Source
		tree := c.Tree(src)
		if fi, err := os.Lstat(tree); err != nil || !fi.IsDir() {
			results[i].Missing = true
			plans = append(plans, plan{c: c})
			continue // no copy (gone, or a link, which a copy leaves out): nothing to apply
		}
		changes, err := c.Changes(tree)
		if err != nil {
			return nil, fmt.Errorf("write_mode: the changes to %s: %w", c.Source, err)
		}
		p := plan{c: c, drifted: map[string]bool{}}
		for _, ch := range changes {
			if ch.Op == Refused {
				results[i].Refused = append(results[i].Refused, ch)
				continue
			}
			p.changes = append(p.changes, ch)
			if c.drifted(w, ch.Path) {
				p.drifted[ch.Path] = true
				results[i].Drifted = append(results[i].Drifted, ch)
				drifts++
			}
		}
		plans = append(plans, p)
	}
	if drifts > 0 && policy == Fail {
		for i := range results {
			results[i].Failed = true
		}
		return results, nil
	}
	for i, p := range plans {
		for _, ch := range p.changes {
			if p.drifted[ch.Path] && policy == Skip {
				continue
			}
			if err := p.c.apply(w, p.c.Tree(src), ch); err != nil {
				ch.Op, ch.Why = Refused, err.Error()
				results[i].Refused = append(results[i].Refused, ch)
				continue
			}
			results[i].Applied = append(results[i].Applied, ch)
		}
	}
	return results, nil
}

// target is the real path a path of the copy stands for.
func (c *Context) target(rel string) string {
	if c.file {
		return c.Source
	}
	return filepath.Join(c.Source, rel)
}

// drifted says whether the real file at rel no longer is what the base
// holds: edited, made or deleted by someone else since the run began.
func (c *Context) drifted(w Writer, rel string) bool {
	data, size, _, err := w.Peek(c.target(rel), maxApply)
	base, inBase := c.sums[rel]
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return inBase
	case err != nil || size > maxApply:
		return true // not a file we can compare (a directory now, unreadable): leave it be
	case !inBase:
		return true
	}
	return sha256.Sum256(data) != base.sum
}

// apply writes or deletes one path through w.
func (c *Context) apply(w Writer, tree string, ch Change) error {
	dst := c.target(ch.Path)
	if ch.Op == Deleted {
		// The Guard deletes only what the agent read or made: read it first.
		if _, _, _, err := w.ReadFile(dst, 1); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		_, err := w.Remove(dst)
		return err
	}
	f, err := os.OpenFile(filepath.Join(tree, ch.Path), os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New("not a regular file")
	case fi.Size() > maxApply:
		return errors.New("larger than " + strconv.Itoa(maxApply>>20) + " MiB")
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil && fi.Size() > 0 {
		return err
	}
	_, _, err = w.WriteFile(dst, data)
	return err
}
