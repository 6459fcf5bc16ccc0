package subagent

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
)

// builtin are the specialised types upstream MassGen v0.1.73 ships
// (massgen/subagent_types, Apache-2.0), unchanged.
//
//go:embed types/*/SUBAGENT.md
var builtin embed.FS

// DefaultTypes are offered when the config names none (subagent_types
// unset), as upstream's DEFAULT_SUBAGENT_TYPES.
var DefaultTypes = []string{"evaluator", "explorer", "researcher", "critic", "execution_trace_analyzer"}

// ProjectTypesDir is where a project keeps its own types, relative to the
// directory massgen runs in.
const ProjectTypesDir = ".agent/subagent_types"

// Type is a specialised subagent: Prompt (the SUBAGENT.md body) becomes
// the child's system message.
type Type struct {
	Name, Description string
	Skills            []string
	ExpectedInput     []string
	Prompt            string
	Source            string // the file it came from ("builtin:NAME" for the embedded ones)
}

type frontMatter struct {
	Name          string   `yaml:"name"`
	Description   string   `yaml:"description"`
	Skills        []string `yaml:"skills"`
	ExpectedInput []string `yaml:"expected_input"`
}

// LoadTypes finds the types of projectDir (a directory of <type>/SUBAGENT.md,
// "" for none) and the built-in ones; a project type wins over a built-in
// one of the same name (case-insensitive). allowed, when not nil, keeps
// only those names; the names it gives that exist nowhere are returned in
// missing. A SUBAGENT.md without a description is skipped, as upstream
// skips it; one with a malformed front matter or fields upstream does not
// know is an error naming the file.
func LoadTypes(projectDir string, allowed []string) (types []Type, missing []string, err error) {
	seen := map[string]bool{}
	add := func(fsys fs.FS, root, label string) error {
		entries, err := fs.ReadDir(fsys, root)
		if err != nil {
			if os.IsNotExist(err) || root == "" {
				return nil
			}
			return err
		}
		for _, e := range entries {
			if !e.IsDir() || strings.EqualFold(e.Name(), "_template") {
				continue
			}
			p := filepath.ToSlash(filepath.Join(root, e.Name(), "SUBAGENT.md"))
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				continue
			}
			t, ok, err := parseType(data, e.Name())
			if err != nil {
				return fmt.Errorf("%s: %w", label+p, err)
			}
			if !ok || seen[strings.ToLower(t.Name)] {
				continue
			}
			t.Source = label + p
			seen[strings.ToLower(t.Name)] = true
			types = append(types, t)
		}
		return nil
	}
	if projectDir != "" {
		if st, err := os.Stat(projectDir); err == nil && st.IsDir() {
			if err := add(os.DirFS(projectDir), ".", projectDir+"/"); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := add(builtin, "types", "builtin:"); err != nil {
		return nil, nil, err
	}
	if allowed == nil {
		allowed = DefaultTypes
	}
	keep := types[:0]
	for _, t := range types {
		if slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, t.Name) }) {
			keep = append(keep, t)
		}
	}
	for _, a := range allowed {
		if !slices.ContainsFunc(keep, func(t Type) bool { return strings.EqualFold(a, t.Name) }) {
			missing = append(missing, a)
		}
	}
	return keep, missing, nil
}

// parseType reads a SUBAGENT.md: YAML front matter between --- lines,
// then the prompt. ok is false for a type without a description.
func parseType(data []byte, dir string) (t Type, ok bool, err error) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	rest, found := bytes.CutPrefix(data, []byte("---\n"))
	if !found {
		return t, false, fmt.Errorf("no front matter (a SUBAGENT.md starts with a --- line)")
	}
	head, body, found := bytes.Cut(rest, []byte("\n---"))
	if !found {
		return t, false, fmt.Errorf("the front matter has no closing --- line")
	}
	var raw map[string]any
	if err := yaml.Unmarshal(head, &raw); err != nil {
		return t, false, fmt.Errorf("front matter: %v", err)
	}
	var unknown []string
	for k := range raw {
		if !slices.Contains([]string{"name", "description", "skills", "expected_input"}, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return t, false, fmt.Errorf("unsupported front matter fields %s (allowed: name, description, skills, expected_input)", strings.Join(unknown, ", "))
	}
	var fm frontMatter
	if err := yaml.Unmarshal(head, &fm); err != nil {
		return t, false, fmt.Errorf("front matter: %v", err)
	}
	if strings.TrimSpace(fm.Description) == "" {
		return t, false, nil
	}
	return Type{Name: cmp.Or(strings.TrimSpace(fm.Name), dir), Description: strings.TrimSpace(fm.Description),
		Skills: fm.Skills, ExpectedInput: fm.ExpectedInput, Prompt: strings.TrimSpace(string(body))}, true, nil
}

// Find returns the type named name among types (case-insensitive).
func Find(types []Type, name string) (Type, bool) {
	i := slices.IndexFunc(types, func(t Type) bool { return strings.EqualFold(t.Name, name) })
	if i < 0 {
		return Type{}, false
	}
	return types[i], true
}
