package webui

import (
	"embed"
	"io/fs"
	"net/http"
)

// The page: plain JavaScript modules, CSS and HTML, served as written (no
// build step, no CDN: docs/webui.md says why).
//
//go:embed static
var staticFiles embed.FS

// staticHandler serves the bundle: index.html at the root, the files by
// name; the browser asks again each time (no-cache), so a new binary's page
// is never mixed with an old one's script.
func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
