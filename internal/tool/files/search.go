package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace"
)

// skipDirs are not searched by glob and grep: version-control internals
// and dependency trees, huge and rarely what a model looks for. They can
// still be listed and read by name.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "__pycache__": true, ".venv": true}

func listDirectory(g *workspace.Guard) tool.Tool {
	return fn("list_directory", "List a directory: [DIR], [FILE] (with size) and [LINK] entries. "+
		"Without a path, your workspace.",
		schema(nil, map[string][2]string{"path": {"string", "the directory (default: your workspace)"}}),
		func(_ context.Context, a pathArgs) (string, error) {
			p := a.Path + a.FilePath
			ents, real, err := g.ReadDir(p)
			if err != nil {
				return "", err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s:\n", real)
			for i, e := range ents {
				if i == maxEntries {
					fmt.Fprintf(&b, "%s %d more entries not shown\n", noteTruncated, len(ents)-i)
					break
				}
				switch {
				case e.Dir:
					fmt.Fprintf(&b, "[DIR] %s/\n", e.Name)
				case e.Symlink:
					fmt.Fprintf(&b, "[LINK] %s\n", e.Name)
				default:
					fmt.Fprintf(&b, "[FILE] %s (%d bytes)\n", e.Name, e.Size)
				}
			}
			if len(ents) == 0 {
				b.WriteString("(empty)\n")
			}
			return capText(b.String(), "list a subdirectory"), nil
		})
}

func globTool(g *workspace.Guard) tool.Tool {
	type args struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	return fn("glob", "Find files by name pattern, relative to path (default: your workspace). "+
		"* and ? match within a name, ** any number of directories: **/*.go, src/**/test_*.py.",
		schema([]string{"pattern"}, map[string][2]string{
			"pattern": {"string", "the pattern"},
			"path":    {"string", "where to search (default: your workspace)"},
		}),
		func(_ context.Context, a args) (string, error) {
			if a.Pattern == "" {
				return "", errors.New("glob needs a pattern, e.g. **/*.go")
			}
			if _, err := path.Match(strings.ReplaceAll(a.Pattern, "**", "*"), ""); err != nil {
				return "", fmt.Errorf("glob: bad pattern %q: %v", a.Pattern, err)
			}
			pat := strings.Split(strings.Trim(a.Pattern, "/"), "/")
			var hits []string
			more := 0
			real, err := g.Walk(a.Path, maxWalk, func(rel string, e workspace.Entry) error {
				if e.Dir && skipDirs[e.Name] {
					return fs.SkipDir
				}
				if matchSegs(pat, strings.Split(filepath.ToSlash(rel), "/")) {
					if len(hits) == maxEntries {
						more++
						return nil
					}
					if e.Dir {
						rel += "/"
					}
					hits = append(hits, rel)
				}
				return nil
			})
			if err != nil && !errors.Is(err, workspace.ErrWalkLimit) {
				return "", err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d match(es) under %s\n", len(hits)+more, real)
			for _, h := range hits {
				b.WriteString(h + "\n")
			}
			if more > 0 {
				fmt.Fprintf(&b, "%s %d more matches not shown; narrow the pattern\n", noteTruncated, more)
			}
			if errors.Is(err, workspace.ErrWalkLimit) {
				fmt.Fprintf(&b, "%s the search stopped after %d entries; search a subdirectory\n", noteTruncated, maxWalk)
			}
			return capText(b.String(), "narrow the pattern"), nil
		})
}

// matchSegs matches path segments against pattern segments, where a
// "**" segment matches any number of segments (none included).
func matchSegs(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], segs[0])
	return ok && matchSegs(pat[1:], segs[1:])
}

func grepTool(g *workspace.Guard) tool.Tool {
	type args struct {
		Pattern    string `json:"pattern"`
		Path       string `json:"path"`
		Include    string `json:"include"`
		IgnoreCase bool   `json:"ignore_case"`
	}
	return fn("grep", "Search text files for a regular expression (RE2 syntax). Returns path:line: text. "+
		"path may be a file or a directory (default: your workspace); include filters file names (e.g. *.go).",
		schema([]string{"pattern"}, map[string][2]string{
			"pattern":     {"string", "the regular expression"},
			"path":        {"string", "file or directory to search (default: your workspace)"},
			"include":     {"string", "only files whose name matches this glob (optional)"},
			"ignore_case": {"boolean", "case-insensitive (default false)"},
		}),
		func(ctx context.Context, a args) (string, error) {
			expr := a.Pattern
			if a.IgnoreCase {
				expr = "(?i)" + expr
			}
			re, err := regexp.Compile(expr)
			if err != nil || a.Pattern == "" {
				return "", fmt.Errorf("grep: bad pattern %q: %v", a.Pattern, err)
			}
			var out []string
			more, skipped := 0, 0
			search := func(file, shown string) {
				data, size, real, err := g.Peek(file, maxGrepFileSz)
				if err != nil || size > maxGrepFileSz || binary(real, data) != "" {
					skipped++
					return
				}
				for i, line := range strings.Split(string(data), "\n") {
					if !re.MatchString(line) {
						continue
					}
					if len(out) == maxGrepHits {
						more++
						continue
					}
					if len(line) > 500 {
						line = line[:500] + "…"
					}
					out = append(out, fmt.Sprintf("%s:%d: %s", shown, i+1, line))
				}
			}
			root := a.Path
			if root == "" {
				root = "."
			}
			// A file is searched alone; a directory is walked.
			if _, _, err := g.ReadDir(root); err != nil {
				if _, _, _, rerr := g.Peek(root, 1); rerr != nil {
					return "", err
				}
				search(root, root)
			} else {
				_, err = g.Walk(root, maxWalk, func(rel string, e workspace.Entry) error {
					if ctx.Err() != nil {
						return fs.SkipAll
					}
					if e.Dir {
						if skipDirs[e.Name] {
							return fs.SkipDir
						}
						return nil
					}
					if e.Symlink {
						return nil
					}
					if a.Include != "" {
						if ok, _ := path.Match(a.Include, e.Name); !ok {
							return nil
						}
					}
					search(filepath.Join(root, rel), rel)
					return nil
				})
				if err != nil && !errors.Is(err, workspace.ErrWalkLimit) {
					return "", err
				}
			}
			var b strings.Builder
			if len(out) == 0 {
				b.WriteString("no matches\n")
			}
			for _, l := range out {
				b.WriteString(l + "\n")
			}
			if more > 0 {
				fmt.Fprintf(&b, "%s %d more matching lines not shown; narrow the pattern or the path\n", noteTruncated, more)
			}
			if skipped > 0 {
				fmt.Fprintf(&b, "(%d binary, unreadable or larger than %d bytes files skipped)\n", skipped, maxGrepFileSz)
			}
			return capText(b.String(), "narrow the pattern or the path"), ctx.Err()
		})
}
