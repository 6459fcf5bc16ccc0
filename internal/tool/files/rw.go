package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/workspace"
)

func readFile(g *workspace.Guard) tool.Tool {
	type args struct {
		pathArgs
		Offset int `json:"offset"`
		Limit  int `json:"limit"`
	}
	return fn("read_file", "Read a text file. Paths are relative to your workspace unless absolute. "+
		"offset (1-based line) and limit (lines) read part of a long file.",
		schema([]string{"path"}, map[string][2]string{
			"path":   {"string", "the file to read"},
			"offset": {"integer", "first line to return, 1-based (optional)"},
			"limit":  {"integer", "number of lines to return (optional)"},
		}),
		func(_ context.Context, a args) (string, error) {
			p, err := a.get("read_file")
			if err != nil {
				return "", err
			}
			data, size, real, err := g.ReadFile(p, maxRead)
			if err != nil {
				return "", err
			}
			if why := binary(real, data); why != "" {
				return "", fmt.Errorf("read_file refuses %s: %s (%d bytes); text tools read text only", p, why, size)
			}
			text := string(data)
			note := ""
			if size > int64(len(data)) {
				note = fmt.Sprintf("\n%s read the first %d of %d bytes", noteTruncated, len(data), size)
			}
			if a.Offset > 0 || a.Limit > 0 {
				lines := strings.SplitAfter(text, "\n")
				from := max(a.Offset, 1) - 1
				if from >= len(lines) {
					return "", fmt.Errorf("read_file %s: offset %d is past the end (%d lines)", p, a.Offset, len(lines))
				}
				to := len(lines)
				if a.Limit > 0 {
					to = min(from+a.Limit, to)
				}
				text = strings.Join(lines[from:to], "")
				if to < len(lines) {
					note += fmt.Sprintf("\n[lines %d-%d of %d]", from+1, to, len(lines))
				}
			}
			return capText(text, "use offset and limit to read the rest") + note, nil
		})
}

func writeFile(g *workspace.Guard) tool.Tool {
	type args struct {
		pathArgs
		Content *string `json:"content"`
	}
	return fn("write_file", "Create a file or replace its whole content. Missing directories are made. "+
		"Paths are relative to your workspace unless absolute.",
		schema([]string{"path", "content"}, map[string][2]string{
			"path":    {"string", "the file to write"},
			"content": {"string", "the complete new content"},
		}),
		func(_ context.Context, a args) (string, error) {
			p, err := a.get("write_file")
			if err != nil {
				return "", err
			}
			if a.Content == nil {
				return "", fmt.Errorf("write_file needs content (the complete text of %s)", p)
			}
			real, created, err := g.WriteFile(p, []byte(*a.Content))
			if err != nil {
				return "", err
			}
			verb := "replaced"
			if created {
				verb = "created"
			}
			return fmt.Sprintf("%s %s (%d bytes)", verb, real, len(*a.Content)), nil
		})
}

func editFile(g *workspace.Guard) tool.Tool {
	type args struct {
		pathArgs
		Old        *string `json:"old_string"`
		New        *string `json:"new_string"`
		ReplaceAll bool    `json:"replace_all"`
	}
	return fn("edit_file", "Replace an exact string in a text file. old_string must occur exactly once "+
		"(include surrounding lines to make it unique) unless replace_all is true.",
		schema([]string{"path", "old_string", "new_string"}, map[string][2]string{
			"path":        {"string", "the file to edit"},
			"old_string":  {"string", "the exact text to replace"},
			"new_string":  {"string", "the replacement"},
			"replace_all": {"boolean", "replace every occurrence (default false)"},
		}),
		func(_ context.Context, a args) (string, error) {
			p, err := a.get("edit_file")
			if err != nil {
				return "", err
			}
			if a.Old == nil || a.New == nil || *a.Old == "" {
				return "", fmt.Errorf("edit_file needs a non-empty old_string and a new_string")
			}
			data, size, real, err := g.ReadFile(p, maxRead)
			if err != nil {
				return "", err
			}
			if size > int64(len(data)) {
				return "", fmt.Errorf("edit_file %s: the file is larger than %d bytes; write it whole instead", p, maxRead)
			}
			if why := binary(real, data); why != "" {
				return "", fmt.Errorf("edit_file refuses %s: %s", p, why)
			}
			text := string(data)
			n := strings.Count(text, *a.Old)
			switch {
			case n == 0:
				return "", fmt.Errorf("edit_file %s: old_string was not found; read the file and copy the text exactly (spaces and line breaks included)", p)
			case n > 1 && !a.ReplaceAll:
				return "", fmt.Errorf("edit_file %s: old_string occurs %d times; include more surrounding text to make it unique, or set replace_all", p, n)
			}
			if !a.ReplaceAll {
				n = 1
			}
			if _, _, err := g.WriteFile(real, []byte(strings.Replace(text, *a.Old, *a.New, n))); err != nil {
				return "", err
			}
			return fmt.Sprintf("edited %s: %d replacement(s)", real, n), nil
		})
}

func deleteFile(g *workspace.Guard) tool.Tool {
	return fn("delete_file", "Delete a file you created or have read, a symbolic link, or an empty directory.",
		schema([]string{"path"}, map[string][2]string{"path": {"string", "what to delete"}}),
		func(_ context.Context, a pathArgs) (string, error) {
			p, err := a.get("delete_file")
			if err != nil {
				return "", err
			}
			real, err := g.Remove(p)
			if err != nil {
				return "", err
			}
			return "deleted " + real, nil
		})
}

func createDirectory(g *workspace.Guard) tool.Tool {
	return fn("create_directory", "Create a directory and any missing parents.",
		schema([]string{"path"}, map[string][2]string{"path": {"string", "the directory to create"}}),
		func(_ context.Context, a pathArgs) (string, error) {
			p, err := a.get("create_directory")
			if err != nil {
				return "", err
			}
			real, err := g.Mkdir(p)
			if err != nil {
				return "", err
			}
			return "created directory " + real, nil
		})
}
