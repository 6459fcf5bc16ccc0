package codegen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Writer writes one file of the tree, making its parent directories; p
// is relative to the tree's root. The agent's workspace.Guard is one
// (through GuardWriter): the workspace is the agent's, so massgen writes
// there only as the guard allows, never through a link the agent made.
type Writer interface {
	WriteFile(p string, data []byte) error
}

// Files are the tree of servers: path (slash-separated, relative to the
// root) → content, and the names of the servers it has wrappers of.
// custom says whether custom_tools/__init__.py is one (it is written
// once: the agent may change it).
func Files(servers []Server, custom bool) (map[string]string, []string) {
	files := map[string]string{}
	names := map[string]bool{}
	var kept []Server
	for _, s := range servers {
		if len(s.Tools) == 0 {
			continue // upstream skips a server without tools
		}
		dir := Ident(s.Name)
		if names[dir] {
			// Two servers whose names differ only in what Python cannot
			// hold: the second keeps its tools as function-calling ones
			// rather than overwrite the first's files.
			continue
		}
		names[dir] = true
		kept = append(kept, s)
		seen := map[string]bool{}
		var tools []Tool
		for _, t := range s.Tools {
			id := Ident(t.Name)
			if seen[id] {
				continue
			}
			seen[id] = true
			tools = append(tools, t)
			files["servers/"+dir+"/"+id+".py"] = wrapper(s.Name, t)
		}
		files["servers/"+dir+"/__init__.py"] = serverInit(s.Name, tools)
	}
	if len(kept) > 0 {
		files["servers/__init__.py"] = serversInit(kept)
	}
	// servers.json: what upstream's client reads, without the commands,
	// arguments and environment (which hold keys): massgen runs the
	// servers, the wrappers only name them.
	reg := map[string]map[string]string{}
	for _, s := range kept {
		reg[s.Name] = map[string]string{"type": "massgen", "module": "servers." + Ident(s.Name)}
	}
	js, _ := json.MarshalIndent(reg, "", "  ")
	files[".mcp/servers.json"] = string(js) + "\n"
	files[".mcp/client.py"] = clientPy
	if custom {
		files["custom_tools/__init__.py"] = customToolsInit
	}
	var coded []string
	for _, s := range kept {
		coded = append(coded, s.Name)
	}
	return files, coded
}

// Write writes files through w.
func Write(w Writer, files map[string]string) error {
	for p, content := range files {
		if err := w.WriteFile(p, []byte(content)); err != nil {
			return fmt.Errorf("code-based tools: writing %s: %w", p, err)
		}
	}
	return nil
}

// GuardWriter adapts a guard's WriteFile (workspace.Guard's signature) to
// a Writer.
type GuardWriter func(p string, data []byte) (string, bool, error)

func (g GuardWriter) WriteFile(p string, data []byte) error {
	_, _, err := g(p, data)
	return err
}

// DirWriter writes below a directory massgen owns (the shared tools
// directory, which agents only read).
type DirWriter string

func (d DirWriter) WriteFile(p string, data []byte) error {
	full := filepath.Join(string(d), filepath.FromSlash(p))
	if !strings.HasPrefix(full, filepath.Clean(string(d))+string(filepath.Separator)) {
		return fmt.Errorf("%s is outside %s", p, d)
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	tmp := full + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, full)
}
