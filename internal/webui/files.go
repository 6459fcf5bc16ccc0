package webui

import (
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxFileView is the most of a file GET /api/files returns.
const maxFileView = 256 << 10

// fileEntry is one entry of a directory listing.
type fileEntry struct {
	Name string `json:"name"`
	Dir  bool   `json:"dir"`
	Size int64  `json:"size"`
}

// files is GET /api/files?run=ID&path=P: the run's log directory, read
// only — the workspace each agent had with each answer
// (agent_<id>/<step>/workspace/), the winner's (final/<id>/workspace/)
// and what it changed in the write context paths
// (final/<id>/context_changes.txt, the originals in context_backup/).
// A directory is listed; a file is returned as text (its first 256 KiB),
// or described when it is not text. Every access goes through an os.Root
// opened on the log directory: no "..", absolute path or symbolic link
// reaches outside it.
func (u *UI) files(w http.ResponseWriter, r *http.Request) {
	f, ok := u.findRun(w, r.URL.Query().Get("run"))
	if !ok {
		return
	}
	if f.logDir == "" {
		apiError(w, http.StatusNotFound, "this run has no log directory (yet)")
		return
	}
	p := path.Clean("/" + r.URL.Query().Get("path"))
	rel := strings.TrimPrefix(p, "/")
	if rel == "" {
		rel = "."
	}
	root, err := os.OpenRoot(f.logDir)
	if err != nil {
		apiError(w, http.StatusNotFound, "the run's log directory cannot be opened")
		return
	}
	defer root.Close()
	st, err := root.Stat(rel)
	if err != nil {
		apiError(w, http.StatusNotFound, "%s: no such file in the run's log directory", p)
		return
	}
	if st.IsDir() {
		entries, err := fs.ReadDir(root.FS(), rel)
		if err != nil {
			apiError(w, http.StatusForbidden, "%s cannot be listed", p)
			return
		}
		list := []fileEntry{}
		for _, e := range entries {
			fe := fileEntry{Name: e.Name(), Dir: e.IsDir()}
			if info, err := e.Info(); err == nil && !e.IsDir() {
				fe.Size = info.Size()
			}
			list = append(list, fe)
		}
		slices.SortFunc(list, func(a, b fileEntry) int {
			if a.Dir != b.Dir {
				if a.Dir {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Name, b.Name)
		})
		writeJSON(w, http.StatusOK, map[string]any{"path": p, "dir": true, "entries": list})
		return
	}
	if !st.Mode().IsRegular() {
		apiError(w, http.StatusForbidden, "%s is not a regular file", p)
		return
	}
	file, err := root.Open(rel)
	if err != nil {
		apiError(w, http.StatusForbidden, "%s cannot be read", p)
		return
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxFileView))
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%s cannot be read", p)
		return
	}
	out := map[string]any{"path": p, "dir": false, "size": st.Size(), "truncated": st.Size() > int64(len(b))}
	// A cut may split a character: only what is whole is checked.
	text := b
	for i := 0; st.Size() > int64(len(b)) && i < utf8.UTFMax && len(text) > 0 && !utf8.Valid(text); i++ {
		text = text[:len(text)-1]
	}
	if utf8.Valid(text) && !slices.Contains(text, 0) {
		out["text"] = string(text)
	} else {
		out["binary"] = true
	}
	writeJSON(w, http.StatusOK, out)
}
