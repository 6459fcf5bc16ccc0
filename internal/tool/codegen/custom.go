package codegen

// The custom tools tree (custom_tools/ beside servers/): upstream copies a
// Python tool library there — custom_tools_path, or with
// auto_discover_custom_tools its own massgen/tool/ package — so the agent
// imports those tools in its scripts as it does the MCP wrappers. Massgen
// ships no Python tool library of its own; auto_discover_custom_tools
// offers upstream's (FindLibrary), when this machine has it.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Bounds of a copied tree: it is source code, not data.
const (
	maxCustomFile  = 1 << 20
	maxCustomTotal = 32 << 20
)

// defaultExcluded are the directories of upstream's library it never
// copies (ToolCodeWriter.copy_custom_tools): its workflow tools, examples,
// internal helpers and documentation.
var defaultExcluded = []string{"workflow_toolkits", "_code_based_example", "_basic", "_file_handlers", "_web_tools", "docs", "__pycache__"}

// CustomTree is the custom tools tree copied from src: path (relative to
// the tools root: custom_tools/… and the massgen/ stub its tools import)
// → content. A top-level directory is left out when exclude names it,
// when it is one upstream never copies, or when its TOOL.md's
// requires_api_keys names a key haveKey says the agent's commands do not
// get; left lists those (the last two kinds, by name, for the user).
// Links, caches and files past the bounds are not copied.
func CustomTree(src string, exclude []string, haveKey func(string) bool) (files map[string]string, left []string, err error) {
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil, nil, err
	}
	skip := slices.Concat(defaultExcluded, exclude)
	files = map[string]string{}
	total := 0
	add := func(rel string, b []byte) error {
		total += len(b)
		if total > maxCustomTotal {
			return fmt.Errorf("the custom tools in %s are more than %d MiB", src, maxCustomTotal>>20)
		}
		files[rel] = string(b)
		return nil
	}
	for _, e := range ents {
		name := e.Name()
		if slices.Contains(skip, name) || strings.HasPrefix(name, ".") {
			continue
		}
		full := filepath.Join(src, name)
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		if !e.IsDir() {
			if e.Type().IsRegular() {
				if b, err := readBounded(full); err == nil {
					if err := add("custom_tools/"+name, b); err != nil {
						return nil, nil, err
					}
				}
			}
			continue
		}
		if missing := missingKeys(filepath.Join(full, "TOOL.md"), haveKey); len(missing) > 0 {
			left = append(left, fmt.Sprintf("%s (needs %s)", name, strings.Join(missing, ", ")))
			continue
		}
		err := filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 || d.Name() == "__pycache__" {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(src, p)
			b, err := readBounded(p)
			if err != nil {
				return nil
			}
			return add("custom_tools/"+filepath.ToSlash(rel), b)
		})
		if err != nil {
			return nil, nil, err
		}
	}
	// As upstream: every __init__.py becomes one that imports nothing (the
	// library's own import its tools, and with them massgen's dependencies),
	// and the helpers its tools import come along, under a massgen/ stub.
	for p := range files {
		if strings.HasSuffix(p, "/__init__.py") {
			dir := filepath.Base(filepath.Dir(p))
			files[p] = fmt.Sprintf("\"\"\"Tools from %s.\"\"\"\n", dir)
		}
	}
	files["custom_tools/__init__.py"] = "\"\"\"Custom tools provided by user.\"\"\"\n"
	files["massgen/__init__.py"] = ""
	files["massgen/logger_config.py"] = loggerStub
	files["massgen/tool/__init__.py"] = ""
	for _, h := range []string{"_result.py", "_decorators.py"} {
		if b, ok := files["custom_tools/"+h]; ok {
			files["massgen/tool/"+h] = b
		}
	}
	sort.Strings(left)
	return files, left, nil
}

func readBounded(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCustomFile {
		return nil, fmt.Errorf("%s: not a small regular file", p)
	}
	return os.ReadFile(p)
}

// missingKeys are the keys a tool's TOOL.md front matter requires
// (requires_api_keys) that haveKey does not have.
func missingKeys(toolMD string, haveKey func(string) bool) []string {
	b, err := readBounded(toolMD)
	if err != nil {
		return nil
	}
	s := string(b)
	if !strings.HasPrefix(s, "---") {
		return nil
	}
	parts := strings.SplitN(s, "---", 3)
	if len(parts) < 3 {
		return nil
	}
	var meta struct {
		Keys []string `yaml:"requires_api_keys"`
	}
	if yaml.Unmarshal([]byte(parts[1]), &meta) != nil {
		return nil
	}
	var missing []string
	for _, k := range meta.Keys {
		if k != "" && (haveKey == nil || !haveKey(k)) {
			missing = append(missing, k)
		}
	}
	return missing
}

// FindLibrary is massgen's custom tools library for
// auto_discover_custom_tools: upstream MassGen's massgen/tool/ package
// (massgen ships no Python tool library of its own), in the working
// directory (an upstream checkout) or installed for the Python on PATH;
// "" when neither is there.
func FindLibrary(workDir string) string {
	local := filepath.Join(workDir, "massgen", "tool")
	if fi, err := os.Stat(local); err == nil && fi.IsDir() {
		return local
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Only the package's location: importing massgen would run its code.
	cmd := exec.CommandContext(ctx, py, "-c", "import importlib.util as u; s = u.find_spec('massgen'); print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')")
	cmd.Dir = os.TempDir() // not the working directory: its massgen/ is looked at above
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "tool")
	if fi, err := os.Stat(filepath.Join(dir, "_result.py")); strings.TrimSpace(string(out)) != "" && err == nil && fi.Mode().IsRegular() {
		return dir // upstream's: this package (massgen's own Python package is also named massgen, without tool/)
	}
	return ""
}

// loggerStub is upstream's massgen/logger_config.py for tools run
// standalone.
const loggerStub = `"""Minimal logger for standalone custom tools."""
import logging
import sys

# Create simple logger
logger = logging.getLogger("custom_tools")
logger.setLevel(logging.INFO)

# Add console handler if not already present
if not logger.handlers:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter('%(levelname)s - %(message)s'))
    logger.addHandler(handler)
`

// CustomSection is what the system prompt adds on a copied custom tools
// tree (upstream's "Available Custom Tools" and how to import them), or ""
// without one: each tool directory with its TOOL.md description.
func CustomSection(files map[string]string) string {
	var lines []string
	for p, content := range files {
		dir, ok := strings.CutSuffix(strings.TrimPrefix(p, "custom_tools/"), "/TOOL.md")
		if !ok || strings.Contains(dir, "/") || !strings.HasPrefix(p, "custom_tools/") {
			continue
		}
		desc := ""
		for _, l := range strings.Split(content, "\n") {
			if d, ok := strings.CutPrefix(l, "description:"); ok {
				desc = strings.Trim(strings.TrimSpace(d), `"'`)
				break
			}
		}
		lines = append(lines, fmt.Sprintf("- **%s**: %s", dir, desc))
	}
	if len(lines) == 0 {
		return ""
	}
	sort.Strings(lines)
	return "<custom_tools>\n**Available Custom Tools** (Python implementations in `custom_tools/`, read-only copies; read each one's TOOL.md):\n" +
		strings.Join(lines, "\n") + "\n\n" +
		"```bash\nhead -n 80 custom_tools/<tool_name>/TOOL.md\nrg 'tasks:' custom_tools/*/TOOL.md -A 3 | rg -i '<keyword>'\n```\n\n" +
		"Subdirectories under `custom_tools/` don't auto-import tools: import directly from the `.py` file named in TOOL.md " +
		"(`from custom_tools._dir.file import function`), in a script run with execute_command as for `servers/`. " +
		"A tool that needs an API key gets it only from its command's environment.\n</custom_tools>"
}
