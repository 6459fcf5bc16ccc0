package webui

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Bounds of a context path diff.
const (
	maxDiffFiles = 50
	maxDiffLines = 2000 // lines a side; longer files are described, not diffed
	diffContext  = 3
)

// contextDiff is one file the winner changed in a write context path.
type contextDiff struct {
	Path   string `json:"path"`
	Change string `json:"change"`         // modified, added, deleted
	Diff   string `json:"diff,omitempty"` // lines prefixed " ", "-", "+"; "…" between hunks
	Note   string `json:"note,omitempty"` // why there is no diff
}

// diff is GET /api/diff?run=ID: what the winner changed in its write
// context paths during the final presentation, each file's original (the
// backup in the run's log directory) against what the path holds now. The
// files come from final/<winner>/context_changes.txt; only files under a
// context path whose backup is inside the log directory are read, each
// through an os.Root (the log directory, the context path), so a log that
// names other files reaches nothing else.
func (u *UI) diff(w http.ResponseWriter, r *http.Request) {
	f, ok := u.findRun(w, r.URL.Query().Get("run"))
	if !ok {
		return
	}
	if f.live != nil && f.live.done != nil {
		select { // the changes are written once the run's turn returns
		case <-f.live.done:
		case <-r.Context().Done():
			return
		}
	}
	out := []contextDiff{}
	if f.logDir == "" {
		writeJSON(w, http.StatusOK, map[string]any{"files": out})
		return
	}
	logs, err := os.OpenRoot(f.logDir)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"files": out})
		return
	}
	defer logs.Close()
	reports, _ := fs.Glob(logs.FS(), "final/*/context_changes.txt")
	for _, rep := range reports {
		b, err := fs.ReadFile(logs.FS(), rep)
		if err != nil {
			continue
		}
		originals := map[string]string{} // context path → its backup, relative to the log directory
		var changes [][2]string
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := sc.Text()
			if p, b, ok := strings.Cut(strings.TrimPrefix(line, "the originals of "), " are in "); ok && strings.HasPrefix(line, "the originals of ") {
				if rel, err := filepath.Rel(f.logDir, b); err == nil && filepath.IsLocal(rel) {
					originals[p] = rel
				}
				continue
			}
			for _, kind := range []string{"modified", "added", "deleted"} {
				if rest, ok := strings.CutPrefix(line, kind+" "); ok {
					changes = append(changes, [2]string{kind, strings.TrimLeft(rest, " ")})
				}
			}
		}
		for _, c := range changes {
			if len(out) >= maxDiffFiles {
				break
			}
			out = append(out, u.diffOne(logs, originals, c[0], c[1]))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out})
}

// diffOne compares one changed file's original with its current content.
func (u *UI) diffOne(logs *os.Root, originals map[string]string, kind, path string) contextDiff {
	d := contextDiff{Path: path, Change: kind}
	if strings.Contains(path, " -> ") || strings.HasSuffix(path, string(filepath.Separator)) || strings.HasSuffix(path, ")") {
		d.Note = "not a regular file"
		return d
	}
	var ctx, backup string
	for p, b := range originals {
		if strings.HasPrefix(path, p+string(filepath.Separator)) && len(p) > len(ctx) {
			ctx, backup = p, b
		}
	}
	if ctx == "" {
		d.Note = "no backup of its context path in the log directory"
		return d
	}
	rel := strings.TrimPrefix(path, ctx+string(filepath.Separator))
	if !filepath.IsLocal(rel) {
		d.Note = "outside its context path"
		return d
	}
	var before, after string
	var ok bool
	if kind != "added" {
		if before, ok = readText(logs, filepath.Join(backup, rel)); !ok {
			d.Note = "its original is not text, or not in the backup (.git and node_modules are not backed up)"
			return d
		}
	}
	if kind != "deleted" {
		root, err := os.OpenRoot(ctx)
		if err != nil {
			d.Note = "its context path cannot be opened now"
			return d
		}
		after, ok = readText(root, rel)
		root.Close()
		if !ok {
			d.Note = "it is not text now, or no longer there"
			return d
		}
	}
	d.Diff, d.Note = lineDiff(before, after)
	return d
}

// readText reads a regular file under root as text, up to maxFileView.
func readText(root *os.Root, name string) (string, bool) {
	st, err := root.Lstat(name)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxFileView {
		return "", false
	}
	f, err := root.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileView))
	if err != nil || !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", false
	}
	return string(b), true
}

// lineDiff is a line diff of a and b (longest common subsequence), with
// diffContext unchanged lines around each change.
func lineDiff(a, b string) (string, string) {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	}
	x, y := split(a), split(b)
	if len(x) > maxDiffLines || len(y) > maxDiffLines {
		return "", "too long to show a diff here: compare the original in the log directory"
	}
	// lcs[i][j] is the length of the longest common subsequence of x[i:]
	// and y[j:].
	lcs := make([][]uint16, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]uint16, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		c    byte
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, op{' ', x[i]})
			i++
			j++
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i]})
			i++
		default:
			ops = append(ops, op{'+', y[j]})
			j++
		}
	}
	// Keep the changes and diffContext lines around them.
	keep := make([]bool, len(ops))
	for k, o := range ops {
		if o.c != ' ' {
			for m := max(0, k-diffContext); m <= min(len(ops)-1, k+diffContext); m++ {
				keep[m] = true
			}
		}
	}
	var sb strings.Builder
	gap := false
	for k, o := range ops {
		if !keep[k] {
			gap = true
			continue
		}
		if gap {
			sb.WriteString("…\n")
		}
		gap = false
		sb.WriteByte(o.c)
		sb.WriteString(o.line)
		sb.WriteByte('\n')
	}
	if sb.Len() == 0 {
		return "", "no change in its text (its mode or time changed)"
	}
	return sb.String(), ""
}
