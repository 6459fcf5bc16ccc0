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
	var out []config.ContextPath
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
		if _, err := os.Stat(p); err != nil || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, config.ContextPath{Path: p, Permission: perm})
	}
	return out
}
