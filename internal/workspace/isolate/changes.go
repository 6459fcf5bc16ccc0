package isolate

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/workspace"
)

// Op is what happened to a path of a copy.
type Op string

// Ops.
const (
	Added    Op = "added"
	Modified Op = "modified"
	Deleted  Op = "deleted"
	Refused  Op = "refused" // never applied: Why says why
)

// Change is one path of a copy that differs from its base.
type Change struct {
	Path string // relative to the copy (OS separators)
	Op   Op
	Why  string // for Refused
}

// Bounds of a diff shown to the agents.
const (
	maxDiffFiles = 300
	maxDiffBytes = 1 << 20
)

// Changes compares the copy at tree (c's copy in some workspace or
// snapshot) with the base: regular files added, modified (content or the
// executable bit) and deleted; anything else that differs — a link, a
// special file, anything under .git or .massgen — is listed as Refused.
// The scratch directory is left out.
func (c *Context) Changes(tree string) ([]Change, error) {
	var out []Change
	seen := map[string]bool{}
	// What a copy of the tree could not carry (links, special files: see
	// Keep) was listed beside it.
	if data, err := os.ReadFile(tree + ".refused"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if rel, why, ok := strings.Cut(line, "\t"); ok && filepath.IsLocal(rel) && !seen[rel] {
				seen[rel] = true
				out = append(out, Change{Path: rel, Op: Refused, Why: why})
			}
		}
	}
	err := workspace.WalkTree(tree, func(rel string, e *workspace.TreeEntry) error {
		if rel == Scratch {
			return fs.SkipDir
		}
		if slices.ContainsFunc(strings.Split(rel, string(filepath.Separator)), never) {
			out = append(out, Change{Path: rel, Op: Refused, Why: "version control, secrets (.env) and massgen's own files are never applied"})
			if e.Mode.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case e.Mode.IsDir():
			if e.Mount {
				out = append(out, Change{Path: rel, Op: Refused, Why: "a mount point"})
				return fs.SkipDir
			}
			return nil
		case e.Mode&fs.ModeSymlink != 0:
			if _, ok := c.sums[rel]; ok {
				seen[rel] = true // a file replaced by a link: the file stays as it is
			}
			out = append(out, Change{Path: rel, Op: Refused, Why: "a symbolic link (-> " + e.Target + "): links are never applied"})
			return nil
		case !e.Mode.IsRegular():
			if _, ok := c.sums[rel]; ok {
				seen[rel] = true
			}
			out = append(out, Change{Path: rel, Op: Refused, Why: "a special file: only regular files are applied"})
			return nil
		}
		if c.file && rel != filepath.Base(c.Source) {
			out = append(out, Change{Path: rel, Op: Refused, Why: "only the file " + c.Source + " is shared"})
			return nil
		}
		seen[rel] = true
		sg, err := sum(e)
		if err != nil {
			return err
		}
		switch old, ok := c.sums[rel]; {
		case !ok:
			out = append(out, Change{Path: rel, Op: Added})
		case old != sg:
			out = append(out, Change{Path: rel, Op: Modified})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for rel := range c.sums {
		if !seen[rel] {
			out = append(out, Change{Path: rel, Op: Deleted})
		}
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Diff is the unified diff of the changes of the copy at tree against the
// base, paths relative to the copy (a/… b/…), as git diff writes it.
func (s *Session) Diff(ctx context.Context, c *Context, tree string, changes []Change) string {
	var b bytes.Buffer
	n := 0
	for _, ch := range changes {
		if ch.Op == Refused {
			continue
		}
		if n == maxDiffFiles || b.Len() > maxDiffBytes {
			fmt.Fprintf(&b, "# … and more changed files, not shown (the diff is cut at %d files or %d KiB)\n", maxDiffFiles, maxDiffBytes>>10)
			break
		}
		n++
		from, to := filepath.Join(c.base, ch.Path), filepath.Join(tree, ch.Path)
		switch ch.Op {
		case Added:
			from = os.DevNull
		case Deleted:
			to = os.DevNull
		}
		out, err := git(ctx, s.home, s.home, []int{1}, "-c", "core.quotePath=false", "diff", "--no-index", "--no-color",
			"--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--", from, to)
		if err != nil {
			fmt.Fprintf(&b, "# %s %s (no diff: %v)\n", ch.Op, ch.Path, err)
			continue
		}
		b.Write(relabel(out, from, to, filepath.ToSlash(ch.Path)))
	}
	return b.String()
}

// relabel rewrites the header lines of one file's diff (those before its
// first hunk) to name the file by its path in the copy.
func relabel(diff []byte, from, to, rel string) []byte {
	var out bytes.Buffer
	header := true
	for line := range bytes.SplitAfterSeq(diff, []byte("\n")) {
		if header && bytes.HasPrefix(line, []byte("@@")) {
			header = false
		}
		if header {
			s := string(line)
			for _, p := range []string{from, to} {
				if p == os.DevNull {
					continue
				}
				p = strings.TrimPrefix(filepath.ToSlash(p), "/")
				s = strings.ReplaceAll(s, "a/"+p, "a/"+rel)
				s = strings.ReplaceAll(s, "b/"+p, "b/"+rel)
			}
			line = []byte(s)
		}
		out.Write(line)
	}
	return out.Bytes()
}

// Summary is a short account of changes, one line each.
func Summary(changes []Change) string {
	var b strings.Builder
	for _, ch := range changes {
		fmt.Fprintf(&b, "%-8s %s", ch.Op, ch.Path)
		if ch.Why != "" {
			b.WriteString(" (" + ch.Why + ")")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Annotate writes, beside each copy held by snap (a snapshot of the
// workspace live, massgen's own, which leaves links and special files
// out), what the live copy held that the snapshot could not carry
// (Dir/ctx_<n>.refused), and its diff against the base: Dir/ctx_<n>.diff,
// headed by the list of changes as comments (git apply skips them). An
// agent shown the snapshot reads what the answer changed without comparing
// trees.
func (s *Session) Annotate(ctx context.Context, snap, live string) error {
	var errs []error
	for _, c := range s.ctxs {
		if err := keepRefused(c.Tree(live), c.Tree(snap)); err != nil {
			errs = append(errs, err)
		}
		tree := c.Tree(snap)
		if fi, err := os.Lstat(tree); err != nil || !fi.IsDir() {
			continue
		}
		changes, err := c.Changes(tree)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# write_mode: the changes of %s (a copy of %s) since the run began\n", c.Name, c.Source)
		if len(changes) == 0 {
			b.WriteString("# no changes\n")
		}
		for line := range strings.SplitSeq(strings.TrimSuffix(Summary(changes), "\n"), "\n") {
			if line != "" {
				b.WriteString("# " + line + "\n")
			}
		}
		b.WriteString(s.Diff(ctx, c, tree, changes))
		p := tree + ".diff"
		os.Remove(p)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("write_mode: the diffs of a snapshot: %v", errs)
	}
	return nil
}

// keepRefused lists, in copy+".refused", the entries of the live copy that
// a snapshot leaves out and that are not regular files or directories.
func keepRefused(live, copy string) error {
	if fi, err := os.Lstat(copy); err != nil || !fi.IsDir() {
		return nil
	}
	var b strings.Builder
	err := workspace.WalkTree(live, func(rel string, e *workspace.TreeEntry) error {
		switch {
		case rel == Scratch || slices.ContainsFunc(strings.Split(rel, string(filepath.Separator)), never):
			if e.Mode.IsDir() {
				return fs.SkipDir
			}
		case e.Mode&fs.ModeSymlink != 0:
			fmt.Fprintf(&b, "%s\ta symbolic link (-> %s): links are never applied\n", rel, strings.ReplaceAll(e.Target, "\n", " "))
		case e.Mount:
			fmt.Fprintf(&b, "%s\ta mount point\n", rel)
			return fs.SkipDir
		case !e.Mode.IsRegular() && !e.Mode.IsDir():
			fmt.Fprintf(&b, "%s\ta special file: only regular files are applied\n", rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p := copy + ".refused"
	os.Remove(p)
	if b.Len() == 0 {
		return nil
	}
	return os.WriteFile(p, []byte(b.String()), 0o644)
}
