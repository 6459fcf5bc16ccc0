package webui_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The winner's changes to a write context path are shown as a diff of
// each file's original (the backup in the log directory) against what the
// path holds now; a log that names other files (a path outside every
// backed-up context path, a backup outside the log directory) shows none
// of them.
func TestContextPathDiff(t *testing.T) {
	f := start(t)
	proj := filepath.Join(f.dir, "project")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`agent:
  id: solo
  backend:
    type: sim
    model: presenter
    cwd: ws
    scenario:
      defaults: {ttft_ms: 0}
      models:
        presenter:
          steps:
            - answer: "I will patch main.go."
            - when: coordination
              vote: agent1
            - calls:
                - {name: edit_file, arguments: '{"path": "%[1]s/main.go", "old_string": "package main\n", "new_string": "package main // v2\n"}'}
            - text: "Patched main.go."
ui: {enable_final_presentation: true}
orchestrator:
  context_paths:
    - {path: project, permission: write}
`, proj)
	// The UI offers the files of its config source: add this one.
	if err := os.WriteFile(filepath.Join(f.dir, "fast.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run := f.json(t, http.MethodPost, "/api/runs", `{"config":"fast","question":"Patch main.go."}`, http.StatusCreated)
	id := run["id"].(string)
	f.events(t, id, nil, nil)
	files := f.json(t, http.MethodGet, "/api/diff?run="+id, "", http.StatusOK)["files"].([]any)
	if len(files) != 1 {
		t.Fatalf("diff: %v", files)
	}
	d := files[0].(map[string]any)
	real, _ := filepath.EvalSymlinks(proj)
	if d["change"] != "modified" || d["path"] != filepath.Join(real, "main.go") ||
		d["diff"] != "-package main\n+package main // v2\n \n func main() {}\n" {
		t.Fatalf("diff %#v", d)
	}

	// A tampered report names a file outside the context path and a
	// backup outside the log directory: nothing of them is read.
	meta := f.json(t, http.MethodGet, "/api/run?id="+id, "", http.StatusOK)
	report := filepath.Join(f.root, meta["log"].(string), "final", "solo", "context_changes.txt")
	secret := filepath.Join(f.dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("do not show\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tampered := "modified " + secret + "\nmodified " + filepath.Join(real, "..", "secret.txt") + "\n" +
		"the originals of " + f.dir + " are in " + f.dir + "\n"
	if err := os.WriteFile(report, []byte(tampered), 0o644); err != nil {
		t.Fatal(err)
	}
	resp := f.do(t, http.MethodGet, "/api/diff?run="+id, "", nil)
	var b strings.Builder
	_, _ = fmt.Fprint(&b, resp.Status)
	buf := make([]byte, 1<<16)
	n, _ := resp.Body.Read(buf)
	resp.Body.Close()
	if strings.Contains(string(buf[:n]), "do not show") || !strings.Contains(string(buf[:n]), "no backup") {
		t.Fatalf("a tampered report: %s", buf[:n])
	}
}
