package attack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Class 4: every change the presenter makes in a write context path is
// in the change report (context_changes.txt and the "context path
// change:" lines): created, modified, deleted, mode, links, directories,
// hidden files. A change left out is one the user never reviews.
func TestChangeReport(t *testing.T) {
	needBwrap(t)
	needPython(t)
	type change struct {
		name  string
		cmd   string
		paths []string // each must be named by the report
	}
	changes := []change{
		{"created file", "printf new > new.txt", []string{"new.txt"}},
		{"modified file", "printf more >> main.go", []string{"main.go"}},
		{"truncated file", ": > sub/keep.txt", []string{"sub/keep.txt"}},
		{"deleted file", "rm old.txt", []string{"old.txt"}},
		{"mode change", "chmod 755 run.sh", []string{"run.sh"}},
		{"symlink created", "ln -s main.go link.txt", []string{"link.txt"}},
		{"symlink retargeted", "ln -sfn a.txt link2", []string{"link2"}},
		{"directory created", "mkdir newdir", []string{"newdir"}},
		{"directory deleted", "rmdir emptydir", []string{"emptydir"}},
		{"hidden file created", "printf h > .hidden", []string{".hidden"}},
		{"hidden file in a hidden directory", "mkdir .cfg && printf h > .cfg/.rc", []string{".cfg/.rc"}},
		{"renamed file", "mv a2.txt b2.txt", []string{"a2.txt", "b2.txt"}},
		{"file in a new directory tree", "mkdir -p deep/er && printf x > deep/er/f.txt", []string{"deep/er/f.txt"}},
		{"same size, same mtime rewrite", "python3 -c \"import os; st=os.stat('same.txt'); open('same.txt','w').write('BBBB'); os.utime('same.txt', ns=(st.st_atime_ns, st.st_mtime_ns))\"", []string{"same.txt"}},
		{"hard link created", "ln main.go hard.go", []string{"hard.go"}},
		{"fifo created", "mkfifo pipe", []string{"pipe"}},
	}
	for _, via := range []string{"cmd", "mcp"} {
		dir := tempDir(t)
		proj := filepath.Join(dir, "proj")
		writeFiles(t, proj, map[string]string{"main.go": "package main\n", "old.txt": "old", "a.txt": "a", "a2.txt": "a2",
			"run.sh": "#!/bin/sh\n", "sub/keep.txt": "keep", "same.txt": "AAAA", "emptydir/.keep": ""})
		must(t, os.Remove(filepath.Join(proj, "emptydir", ".keep")))
		must(t, os.Symlink("main.go", filepath.Join(proj, "link2")))
		var script []string
		for _, c := range changes {
			script = append(script, "( cd "+proj+" && "+c.cmd+" )")
		}
		s := team{contexts: []map[string]any{{"path": proj, "permission": "write"}}}
		if via == "cmd" {
			s.present = []call{sh(strings.Join(script, "; "))}
		} else {
			s.mcp = evilServer("")
			s.present = []call{mcpRun(strings.Join(script, "; "))}
		}
		r := runTeam(t, dir, s, runOpts{})
		var report string
		if m, _ := filepath.Glob(filepath.Join(dir, "logs", "*", "final", "solo", "context_changes.txt")); len(m) > 0 {
			report = string(must1(os.ReadFile(m[0])))
		}
		var lines []string
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(l, "context path change:") {
				lines = append(lines, l)
			}
		}
		printed := strings.Join(lines, "\n")
		for _, c := range changes {
			attempt(t, via+": "+c.name, func(t *testing.T) {
				if _, err := os.Lstat(filepath.Join(proj, c.paths[len(c.paths)-1])); err != nil && c.name != "deleted file" && c.name != "directory deleted" {
					t.Logf("the change did not happen (%v)", err)
				}
				for _, p := range c.paths {
					abs := filepath.Join(proj, p)
					if !listed(report, abs) {
						t.Errorf("context_changes.txt does not list %s:\n%s", abs, report)
					}
					if !listed(printed, abs) {
						t.Errorf("the printed report does not list %s:\n%s", abs, printed)
					}
				}
			})
		}
	}
}

// listed reports whether a line of report names abs as a whole path: the
// path, then the line's end, a space (a mode, a link's target) or a slash
// (a directory), never a longer name that starts the same.
func listed(report, abs string) bool {
	for _, l := range strings.Split(report, "\n") {
		i := strings.Index(l, " "+abs)
		if i < 0 {
			continue
		}
		rest := l[i+1+len(abs):]
		if rest == "" || rest[0] == ' ' || rest[0] == '/' {
			return true
		}
	}
	return false
}
