package app

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen/massgen/internal/config"
)

// AtReferences finds upstream's `@path` (read) and `@path:w` (write)
// references in a question: each word starting with @ that names an
// existing file or directory (relative to workDir) becomes a context path.
// A word that names nothing on disk (an @mention, an e-mail address's
// tail) is left alone. The question itself is not changed. It is for the
// command line, where the paths are the user's own; a server does not
// let its clients share its files this way.
func AtReferences(question, workDir string) []config.ContextPath {
	found, _ := scanAtReferences(question, workDir)
	return found
}

// MissingAtReferences lists the @words of a question that look like file
// names (they have a dot or a slash: `@notes.md`, `@docs/`) but name
// nothing on disk, as the user wrote them: a run warns of them rather than
// silently sharing nothing. An @mention (`@alice`) is not one.
func MissingAtReferences(question, workDir string) []string {
	_, missing := scanAtReferences(question, workDir)
	return missing
}

func scanAtReferences(question, workDir string) (found []config.ContextPath, missing []string) {
	seen := map[string]bool{}
	for _, w := range strings.Fields(question) {
		if !strings.HasPrefix(w, "@") || len(w) < 2 {
			continue
		}
		w = strings.TrimRight(w[1:], ".,;!?)\"'")
		perm := "read"
		if p, ok := strings.CutSuffix(w, ":w"); ok {
			w, perm = p, "write"
		}
		p := w
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(workDir, p)
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if _, err := os.Stat(p); err != nil {
			if w != "" && strings.ContainsAny(w, "./") {
				missing = append(missing, "@"+w)
			}
			continue
		}
		found = append(found, config.ContextPath{Path: p, Permission: perm})
	}
	return found, missing
}
