package codegen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// library writes a small tool library shaped like upstream's massgen/tool/.
func library(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range map[string]string{
		"__init__.py":               "from ._greet import *  # imports massgen\n",
		"_result.py":                "class ExecutionResult: pass\n",
		"_greet/TOOL.md":            "---\nname: greet\ndescription: Says hello\nrequires_api_keys: []\n---\n# Greet\n",
		"_greet/__init__.py":        "from .greet import greet\n",
		"_greet/greet.py":           "def greet(n):\n    return 'hello ' + n\n",
		"_greet/sub/deep.py":        "X = 1\n",
		"_greet/__pycache__/x.pyc":  "junk",
		"_paid/TOOL.md":             "---\nname: paid\ndescription: Needs keys\nrequires_api_keys: [PAID_KEY, OTHER_KEY]\n---\n",
		"_paid/paid.py":             "def paid(): pass\n",
		"_have/TOOL.md":             "---\nname: have\ndescription: Needs a key it gets\nrequires_api_keys: [OTHER_KEY]\n---\n",
		"_have/have.py":             "def have(): pass\n",
		"_computer_use/TOOL.md":     "---\nname: cu\ndescription: excluded by config\n---\n",
		"workflow_toolkits/vote.py": "def vote(): pass\n",
		"_code_based_example/x.py":  "pass\n",
		"docs/README.md":            "docs\n",
		"_greet/big.bin":            strings.Repeat("x", maxCustomFile+1),
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "_linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "_greet", "secret.py")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The tree copies the library as upstream does: the directories it never
// copies, those exclude_custom_tools names and those whose TOOL.md needs a
// key the commands do not get are left out (the last named); every
// __init__.py imports nothing; the massgen/ stub carries the helpers; links,
// caches and oversized files are not followed or copied.
func TestCustomTreeCopiesWhatTheAgentMayUse(t *testing.T) {
	files, left, err := CustomTree(library(t), []string{"_computer_use"}, func(k string) bool { return k == "OTHER_KEY" })
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"custom_tools/_greet/greet.py", "custom_tools/_greet/sub/deep.py", "custom_tools/_greet/TOOL.md",
		"custom_tools/_have/have.py", "custom_tools/_result.py", "massgen/tool/_result.py", "massgen/logger_config.py", "massgen/__init__.py"} {
		if _, ok := files[p]; !ok {
			t.Errorf("%s was not copied", p)
		}
	}
	for p := range files {
		for _, no := range []string{"_paid", "_computer_use", "workflow_toolkits", "_code_based_example", "docs/", "__pycache__", "_linked", "secret", "big.bin"} {
			if strings.Contains(p, no) {
				t.Errorf("%s was copied", p)
			}
		}
	}
	if files["custom_tools/__init__.py"] != "\"\"\"Custom tools provided by user.\"\"\"\n" || files["custom_tools/_greet/__init__.py"] != "\"\"\"Tools from _greet.\"\"\"\n" {
		t.Errorf("the __init__.py files import: %q, %q", files["custom_tools/__init__.py"], files["custom_tools/_greet/__init__.py"])
	}
	if !slices.Equal(left, []string{"_paid (needs PAID_KEY)"}) {
		t.Errorf("left out %q, want only _paid for its missing key", left)
	}
	sec := CustomSection(files)
	if !strings.Contains(sec, "- **_greet**: Says hello") || !strings.Contains(sec, "- **_have**: Needs a key it gets") || strings.Contains(sec, "_paid") {
		t.Errorf("the prompt section:\n%s", sec)
	}
	if CustomSection(nil) != "" {
		t.Error("a section without custom tools")
	}
}

// A library bigger than the bound is refused, not copied in part.
func TestCustomTreeBounded(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "_big"), 0o755)
	chunk := strings.Repeat("y", maxCustomFile-1)
	for i := range maxCustomTotal/maxCustomFile + 2 {
		os.WriteFile(filepath.Join(dir, "_big", "f"+string(rune('a'+i%26))+string(rune('a'+i/26))+".py"), []byte(chunk), 0o644)
	}
	if _, _, err := CustomTree(dir, nil, nil); err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Fatalf("a library over the bound: %v", err)
	}
}
