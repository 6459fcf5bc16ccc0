package files_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/files"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

type env struct {
	base, ws, outside, proj string
	g                       *workspace.Guard
	set                     *tool.Set
}

func newEnv(t *testing.T) *env {
	t.Helper()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	e := &env{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), proj: filepath.Join(base, "proj")}
	for p, c := range map[string]string{
		"outside/secret.txt": "secret", "proj/main.go": "package main\n", "ws/notes.md": "one\ntwo\nthree\ntwo\n",
		"ws/img.png": "\x89PNG", "ws/blob": "a\x00b", "ws/src/a.go": "package a\nfunc A() {}\n", "ws/src/sub/b.go": "package sub\n",
		"ws/.git/HEAD": "package git\n",
	} {
		full := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	e.g, err = workspace.New(workspace.Policy{Agent: "agent_a", Workspace: e.ws,
		Context: []workspace.ContextPath{{Path: e.proj, Write: true}}})
	if err != nil {
		t.Fatal(err)
	}
	e.set, err = tool.NewSet(files.Tools(e.g)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) call(t *testing.T, name string, args map[string]any) tool.Result {
	t.Helper()
	tl, ok := e.set.Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	raw, _ := json.Marshal(args)
	return tool.Invoke(context.Background(), tl, string(raw), 0)
}

func ok(t *testing.T, r tool.Result, want ...string) {
	t.Helper()
	if r.IsError {
		t.Fatalf("error result: %s", r.Content)
	}
	for _, w := range want {
		if !strings.Contains(r.Content, w) {
			t.Errorf("result %q lacks %q", r.Content, w)
		}
	}
}

func fails(t *testing.T, r tool.Result, want string) {
	t.Helper()
	if !r.IsError || !strings.Contains(r.Content, want) {
		t.Errorf("want an error saying %q, got %+v", want, r)
	}
}

func TestFileTools(t *testing.T) {
	e := newEnv(t)
	ok(t, e.call(t, "write_file", map[string]any{"path": "out/hello.txt", "content": "hello\nworld\n"}), "created", "12 bytes")
	ok(t, e.call(t, "read_file", map[string]any{"path": "out/hello.txt"}), "hello\nworld")
	ok(t, e.call(t, "read_file", map[string]any{"file_path": "notes.md", "offset": 2, "limit": 2}), "two\nthree\n", "[lines 2-3 of 5]")
	ok(t, e.call(t, "edit_file", map[string]any{"path": "out/hello.txt", "old_string": "world", "new_string": "there"}), "1 replacement")
	if b, _ := os.ReadFile(filepath.Join(e.ws, "out/hello.txt")); string(b) != "hello\nthere\n" {
		t.Errorf("after edit: %q", b)
	}
	fails(t, e.call(t, "edit_file", map[string]any{"path": "notes.md", "old_string": "two", "new_string": "2"}), "occurs 2 times")
	fails(t, e.call(t, "edit_file", map[string]any{"path": "notes.md", "old_string": "four", "new_string": "4"}), "not found")
	ok(t, e.call(t, "edit_file", map[string]any{"path": "notes.md", "old_string": "two", "new_string": "2", "replace_all": true}), "2 replacement")
	ok(t, e.call(t, "list_directory", map[string]any{}), "[DIR] src/", "[FILE] notes.md", "[DIR] out/")
	r := e.call(t, "glob", map[string]any{"pattern": "**/*.go"})
	ok(t, r, "2 match(es)", "src/a.go", "src/sub/b.go")
	r = e.call(t, "grep", map[string]any{"pattern": "^package", "include": "*.go"})
	ok(t, r, "src/a.go:1: package a", "src/sub/b.go:1: package sub")
	if strings.Contains(r.Content, ".git") {
		t.Errorf("grep searched .git: %s", r.Content)
	}
	ok(t, e.call(t, "grep", map[string]any{"pattern": "FUNC A", "ignore_case": true, "path": "src/a.go"}), "src/a.go:2: func A() {}")
	ok(t, e.call(t, "create_directory", map[string]any{"path": "x/y"}), "created directory")
	ok(t, e.call(t, "delete_file", map[string]any{"path": "out/hello.txt"}), "deleted")
	ok(t, e.call(t, "read_file", map[string]any{"path": filepath.Join(e.proj, "main.go")}), "package main")
}

func TestTextToolsRefuseBinary(t *testing.T) {
	e := newEnv(t)
	fails(t, e.call(t, "read_file", map[string]any{"path": "img.png"}), "not text")
	fails(t, e.call(t, "read_file", map[string]any{"path": "blob"}), "binary data")
	fails(t, e.call(t, "edit_file", map[string]any{"path": "blob", "old_string": "a", "new_string": "b"}), "binary data")
	ok(t, e.call(t, "grep", map[string]any{"pattern": "a"}), "files skipped")
}

func TestReadCapNotes(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("0123456789abcdef\n", 10_000) // 170 kB
	ok(t, e.call(t, "write_file", map[string]any{"path": "big.txt", "content": big}))
	r := e.call(t, "read_file", map[string]any{"path": "big.txt"})
	ok(t, r, "[output truncated]", "use offset and limit")
	if len(r.Content) > 101_000 {
		t.Errorf("read_file returned %d bytes", len(r.Content))
	}
}

// TestToolRefusals: the same attempts as the workspace tests, made the way
// a model makes them, each leaving the disk as it was.
func TestToolRefusals(t *testing.T) {
	cases := []struct {
		name  string
		setup func(e *env)
		tool  string
		args  func(e *env) map[string]any
		want  string
	}{
		{"write ..", nil, "write_file", func(e *env) map[string]any { return map[string]any{"path": "../outside/x", "content": "x"} }, "outside every directory"},
		{"write absolute", nil, "write_file", func(e *env) map[string]any {
			return map[string]any{"path": filepath.Join(e.outside, "secret.txt"), "content": "x"}
		}, "outside every directory"},
		{"edit through a planted symlink", func(e *env) {
			os.Symlink(filepath.Join(e.outside, "secret.txt"), filepath.Join(e.ws, "l"))
		}, "edit_file", func(e *env) map[string]any {
			return map[string]any{"path": "l", "old_string": "secret", "new_string": "x"}
		}, "leads out of"},
		{"context path before presentation", nil, "edit_file", func(e *env) map[string]any {
			return map[string]any{"path": filepath.Join(e.proj, "main.go"), "old_string": "main", "new_string": "x"}
		}, "only by the winner"},
		{"delete unread", nil, "delete_file", func(e *env) map[string]any { return map[string]any{"path": "notes.md"} }, "neither created nor read"},
		{"delete after grep only", nil, "delete_file", func(e *env) map[string]any {
			e.call(t, "grep", map[string]any{"pattern": "one"})
			return map[string]any{"path": "notes.md"}
		}, "neither created nor read"},
		{"list outside", nil, "list_directory", func(e *env) map[string]any { return map[string]any{"path": e.outside} }, "outside every directory"},
		{"glob outside", nil, "glob", func(e *env) map[string]any { return map[string]any{"pattern": "*", "path": "../outside"} }, "outside every directory"},
		{"grep through a dir symlink", func(e *env) {
			os.Symlink(e.outside, filepath.Join(e.ws, "d"))
		}, "grep", func(e *env) map[string]any { return map[string]any{"pattern": "secret", "path": "d"} }, "leads out of"},
		{"mkdir outside", nil, "create_directory", func(e *env) map[string]any { return map[string]any{"path": "../newdir"} }, "outside every directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			if c.setup != nil {
				c.setup(e)
			}
			before := wstest.Snapshot(t, e.base)
			r := e.call(t, c.tool, c.args(e))
			fails(t, r, c.want)
			if strings.Contains(r.Content, "secret\n") || strings.Contains(r.Content, ":1: secret") {
				t.Errorf("the outside file leaked: %s", r.Content)
			}
			wstest.Unchanged(t, e.base, before)
		})
	}
}

func TestExecuteCommand(t *testing.T) {
	e := newEnv(t)
	r, err := sandbox.New(e.g, sandbox.Config{Unsandboxed: true})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CI") == "true" && !r.Sandboxed() {
		t.Fatalf("no sandbox in CI: %v", r.Disabled())
	}
	set, err := e.set.With(files.Command(r))
	if err != nil {
		t.Fatal(err)
	}
	e.set = set
	ok(t, e.call(t, "execute_command", map[string]any{"command": "echo hi > made.txt; cat made.txt; exit 3"}), "exit code: 3\nhi\n")
	ok(t, e.call(t, "execute_command", map[string]any{"command": "pwd", "work_dir": "src"}), filepath.Join(e.ws, "src"))
	fails(t, e.call(t, "execute_command", map[string]any{"command": "pwd", "work_dir": ".."}), "outside every directory")
	// A symlink made by a command is no way out for the file tools.
	before := wstest.Snapshot(t, e.outside)
	ok(t, e.call(t, "execute_command", map[string]any{"command": "ln -s " + e.outside + " out"}), "exit code: 0")
	fails(t, e.call(t, "write_file", map[string]any{"path": "out/secret.txt", "content": "x"}), "leads out of")
	fails(t, e.call(t, "read_file", map[string]any{"path": "out/secret.txt"}), "leads out of")
	wstest.Unchanged(t, e.outside, before)
}
