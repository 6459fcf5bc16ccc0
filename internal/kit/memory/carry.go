package memory

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/kit/kitfile"
)

// FromLog finds the winner's memory directory in a run's log directory
// (final/<winner>/workspace/memory, as the run copied it); "" when there
// is none. A link there is not followed.
func FromLog(logDir string) string {
	if logDir == "" {
		return ""
	}
	ents, err := os.ReadDir(filepath.Join(logDir, "final"))
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(logDir, "final", e.Name(), "workspace", Dir)
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			return p
		}
	}
	return ""
}

// Carry copies the memories of from (a previous winner's memory
// directory) into the workspace ws: each tier's markdown files, read
// without following links, written through a Guard over ws. It returns
// how many files it copied.
func Carry(ws, from string) (int, error) {
	if from == "" {
		return 0, nil
	}
	g, err := own(ws)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range Tiers {
		files, err := kitfile.Dir(from, t, ".md")
		if err != nil {
			return n, fmt.Errorf("memory: reading %s: %w", from, err)
		}
		for _, f := range files {
			if _, _, err := g.WriteFile(filepath.Join(Dir, t, f.Name), f.Data); err != nil {
				return n, fmt.Errorf("memory: %w", err)
			}
			n++
		}
	}
	return n, nil
}

// Merge copies the other agents' memories (agent id → workspace) into the
// winner's workspace, as upstream does once the winner is chosen: a name
// the winner lacks is copied; the same name with other content is
// appended under a "From Agent <id>" header; the same content is left.
// It returns the files it wrote, relative to the workspace.
func Merge(winnerWS string, others map[string]string) ([]string, error) {
	g, err := own(winnerWS)
	if err != nil {
		return nil, err
	}
	var wrote []string
	for _, id := range slices.Sorted(maps.Keys(others)) {
		for _, t := range Tiers {
			files, err := kitfile.Dir(filepath.Join(others[id], Dir), t, ".md")
			if err != nil {
				return wrote, fmt.Errorf("memory: agent %s: %w", id, err)
			}
			for _, f := range files {
				rel := filepath.Join(Dir, t, f.Name)
				mine, err := kitfile.Read(g.Workspace(), filepath.ToSlash(rel))
				switch {
				case os.IsNotExist(err):
					mine = nil
				case err != nil:
					continue // not a regular file of the winner's: left alone
				case bytes.Equal(bytes.TrimSpace(mine), bytes.TrimSpace(f.Data)):
					continue
				}
				data := f.Data
				if mine != nil {
					data = fmt.Appendf(bytes.TrimRight(mine, "\n"), "\n\n## From Agent %s\n\n%s\n", id, strings.TrimSpace(string(f.Data)))
				}
				if _, _, err := g.WriteFile(rel, data); err != nil {
					return wrote, fmt.Errorf("memory: %w", err)
				}
				wrote = append(wrote, rel)
			}
		}
	}
	return wrote, nil
}
