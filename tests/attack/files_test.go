package attack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/wstest"
)

// protectedTargets are the names a winner with a write context path must
// never write in its final presentation (protected_paths: [secrets/]).
var protectedTargets = []string{".env", ".env.local", ".massgen/config.yaml", ".git/config",
	".git/hooks/post-checkout", "sub/.git/hooks/pre-commit", "secrets/key.pem"}

// protectedRoot is the protected part of a target: what must not change.
func protectedRoot(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		switch p {
		case ".env", ".env.local", ".massgen", ".git", "secrets":
			return strings.Join(parts[:i+1], "/")
		}
	}
	return rel
}

// under keeps the fingerprint lines of root's entries (and of a copy of
// it renamed root.moved).
func under(tr wstest.Tree, root string) wstest.Tree {
	var out wstest.Tree
	for _, l := range tr {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		if p := f[1]; p == root || strings.HasPrefix(p, root+"/") || strings.HasPrefix(p, root+".moved") {
			out = append(out, l)
		}
	}
	return out
}

// concerning keeps the lines one attempt on rel answers for: rel and what
// is under it, the directories from its protected root down to it, and a
// copy of the root renamed root.moved.
func concerning(tr wstest.Tree, rel string) wstest.Tree {
	root := protectedRoot(rel)
	var out wstest.Tree
	for _, l := range tr {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		p := f[1]
		ancestor := (p == root || strings.HasPrefix(p, root+"/")) && strings.HasPrefix(rel, p+"/")
		if p == rel || strings.HasPrefix(p, rel+"/") || ancestor || strings.HasPrefix(p, root+".moved") {
			out = append(out, l)
		}
	}
	return out
}

// method is one way to write target (absolute) from the presentation,
// i (a number unique in the run) naming its scratch files. It returns
// the calls, or nil when the method does not apply.
type method struct {
	name          string
	existingOnly  bool
	calls         func(proj, rel string, i int) []call
	readFirst     bool // a read_file of the target first (delete_file needs it)
	viaMCP        bool
	control       func(proj string) []call // a legitimate change the method makes, proving write access
	controlChange string                   // the file the control creates or changes
}

func shellWrite(target string) string {
	return fmt.Sprintf("mkdir -p %q; printf PWNED > %q", filepath.Dir(target), target)
}

func payload(proj, rel string, i int) string {
	return fmt.Sprintf("mkdir -p payload%[1]d/%[2]s && printf PWNED > payload%[1]d/%[3]s", i, filepath.Dir(rel), rel)
}

var methods = []method{
	{name: "write_file", calls: func(proj, rel string, i int) []call {
		return []call{tc("write_file", map[string]any{"path": filepath.Join(proj, rel), "content": "PWNED"})}
	}, control: func(proj string) []call {
		return []call{tc("write_file", map[string]any{"path": filepath.Join(proj, "allowed.txt"), "content": "ok"})}
	}, controlChange: "allowed.txt"},
	{name: "edit_file", existingOnly: true, calls: func(proj, rel string, i int) []call {
		return []call{tc("edit_file", map[string]any{"path": filepath.Join(proj, rel), "old_string": "original", "new_string": "PWNED"})}
	}, control: func(proj string) []call {
		return []call{tc("edit_file", map[string]any{"path": filepath.Join(proj, "main.go"), "old_string": "package main", "new_string": "package main // edited"})}
	}, controlChange: "main.go"},
	{name: "delete_file", existingOnly: true, readFirst: true, calls: func(proj, rel string, i int) []call {
		return []call{tc("delete_file", map[string]any{"path": filepath.Join(proj, rel)})}
	}},
	{name: "sh redirection", calls: func(proj, rel string, i int) []call {
		return []call{sh(shellWrite(filepath.Join(proj, rel)))}
	}, control: func(proj string) []call { return []call{sh("printf ok > " + filepath.Join(proj, "allowed.txt"))} }, controlChange: "allowed.txt"},
	{name: "python", calls: func(proj, rel string, i int) []call {
		t := filepath.Join(proj, rel)
		return []call{sh(fmt.Sprintf(`python3 -c "import os; os.makedirs(os.path.dirname('%s'), exist_ok=True); open('%s', 'w').write('PWNED')"`, t, t))}
	}},
	{name: "mv from the workspace", calls: func(proj, rel string, i int) []call {
		t := filepath.Join(proj, rel)
		return []call{sh(fmt.Sprintf("printf PWNED > mv%d; mkdir -p %q; mv -f mv%d %q", i, filepath.Dir(t), i, t))}
	}},
	{name: "rename the parent away", calls: func(proj, rel string, i int) []call {
		root := filepath.Join(proj, protectedRoot(rel))
		return []call{sh(fmt.Sprintf("mv %q %q; %s", root, root+".moved", shellWrite(filepath.Join(proj, rel))))}
	}},
	{name: "ln -s", calls: func(proj, rel string, i int) []call {
		t := filepath.Join(proj, rel)
		return []call{sh(fmt.Sprintf("mkdir -p %q; ln -sfn /etc/passwd %q", filepath.Dir(t), t))}
	}},
	{name: "hard link", calls: func(proj, rel string, i int) []call {
		t := filepath.Join(proj, rel)
		return []call{sh(fmt.Sprintf("printf PWNED > hl%d; mkdir -p %q; ln -f hl%d %q || ln -f %q %q", i, filepath.Dir(t), i, t, filepath.Join(proj, "main.go"), t))}
	}},
	{name: "cp -r", calls: func(proj, rel string, i int) []call {
		return []call{sh(payload(proj, rel, i) + fmt.Sprintf(" && cp -rf payload%d/. %q", i, proj))}
	}},
	{name: "tar extraction", calls: func(proj, rel string, i int) []call {
		return []call{sh(payload(proj, rel, i) + fmt.Sprintf(" && tar -cf p%[1]d.tar -C payload%[1]d . && tar -xf p%[1]d.tar -C %[2]q --overwrite", i, proj))}
	}},
	{name: "mkdir -p", calls: func(proj, rel string, i int) []call {
		return []call{sh(fmt.Sprintf("mkdir -p %q", filepath.Join(proj, rel, "x")))}
	}},
	{name: "rm -rf", existingOnly: true, calls: func(proj, rel string, i int) []call {
		return []call{sh(fmt.Sprintf("rm -rf %q", filepath.Join(proj, protectedRoot(rel))))}
	}},
	{name: "MCP server tool", viaMCP: true, calls: func(proj, rel string, i int) []call {
		return []call{mcpRun(shellWrite(filepath.Join(proj, rel)))}
	}, control: func(proj string) []call { return []call{mcpRun("printf ok > " + filepath.Join(proj, "allowed.txt"))} }, controlChange: "allowed.txt"},
}

// protectedProject lays out proj: with every target ("existing") or
// their directories only.
func protectedProject(t *testing.T, proj string, existing bool, targets []string) {
	files := map[string]string{"main.go": "package main\n", "deleteme.txt": "x", ".git/HEAD": "ref: refs/heads/main\n",
		"sub/.git/HEAD": "ref: refs/heads/main\n", "a/b/.git/HEAD": "ref: refs/heads/main\n", "sub/code.go": "package sub\n"}
	if existing {
		for _, rel := range targets {
			files[rel] = "original " + rel + "\n"
		}
	}
	writeFiles(t, proj, files)
}

// writeAttempts runs every method against every target from the final
// presentation, with the targets existing or not, one run per method and
// state, one attempt per target; each attempt checks that its protected
// part is the same on disk afterwards.
func writeAttempts(t *testing.T, targets []string, protected []string, ms []method) {
	type batch struct {
		m        method
		existing bool
		dir      string
		proj     string
		before   wstest.Tree
		r        result
	}
	var batches []*batch
	for _, m := range ms {
		for _, existing := range []bool{true, false} {
			if m.existingOnly && !existing {
				continue
			}
			dir := tempDir(t)
			b := &batch{m: m, existing: existing, dir: dir, proj: filepath.Join(dir, "proj")}
			protectedProject(t, b.proj, existing, targets)
			b.before = snap(t, b.proj)
			batches = append(batches, b)
		}
	}
	// The runs, two at a time (slots).
	done := make(chan struct{})
	for _, b := range batches {
		go func() {
			defer func() { done <- struct{}{} }()
			s := team{contexts: []map[string]any{{"path": b.proj, "permission": "write", "protected_paths": protected}}}
			var reads, calls []call
			for i, rel := range targets {
				if b.m.readFirst {
					reads = append(reads, tc("read_file", map[string]any{"path": filepath.Join(b.proj, rel)}))
				}
				calls = append(calls, b.m.calls(b.proj, rel, i)...)
			}
			if b.m.control != nil {
				calls = append(calls, b.m.control(b.proj)...)
			}
			if b.m.viaMCP {
				s.mcp = evilServer("")
			}
			if len(reads) > 0 {
				s.present = reads
				s.presentSteps = [][]call{calls}
			} else {
				s.present = calls
			}
			b.r = runTeam(t, b.dir, s, runOpts{})
		}()
	}
	for range batches {
		<-done
	}
	for _, b := range batches {
		state := "missing"
		if b.existing {
			state = "existing"
		}
		controlOK := b.m.control == nil
		if !controlOK {
			after := snap(t, b.proj)
			controlOK = len(under(after, b.m.controlChange)) > 0 && diffTrees(under(b.before, b.m.controlChange), under(after, b.m.controlChange)) != ""
			if !controlOK {
				t.Errorf("%s (%s): the legitimate write of %s did not happen either, so the refusals below prove nothing:\n%s", b.m.name, state, b.m.controlChange, b.r)
			}
		}
		for _, rel := range targets {
			attempt(t, fmt.Sprintf("%s: %s (%s)", b.m.name, rel, state), func(t *testing.T) {
				after := snap(t, b.proj)
				if d := diffTrees(concerning(b.before, rel), concerning(after, rel)); d != "" {
					t.Errorf("%s of %s changed the protected %s on disk:\n%s\nthe run's progress: %s", b.m.name, rel, protectedRoot(rel), d, tail(b.r.stderr, 2500))
				}
			})
		}
	}
}

// Class 3: protected names stay unwritten in the final presentation, by
// every tool path.
func TestProtectedNames(t *testing.T) {
	needBwrap(t)
	needPython(t)
	writeAttempts(t, protectedTargets, []string{"secrets/"}, methods)
}

// Class 5: a nested repository's .git is as protected as the top one.
func TestNestedGit(t *testing.T) {
	needBwrap(t)
	needPython(t)
	var ms []method
	for _, m := range methods {
		switch m.name {
		case "write_file", "sh redirection", "python", "MCP server tool", "mv from the workspace":
			ms = append(ms, m)
		}
	}
	writeAttempts(t, []string{"sub/.git/config", "sub/.git/index", "a/b/.git/hooks/post-merge", "a/b/.git/config"}, nil, ms)
}

// Class 2: what the copies (snapshots, the logs' workspace copies, the
// final copy, the context backup) hold never comes through a link to
// outside.
func TestCopiesThroughLinks(t *testing.T) {
	needBwrap(t)
	needPython(t)
	attacks := map[string]func(out string) team{
		"symlink to a secret file outside": func(out string) team {
			return team{coord: []call{sh("ln -s " + filepath.Join(out, "secret.txt") + " leak.txt; echo mine > mine.txt")}}
		},
		"relative symlink to a secret file outside": func(out string) team {
			return team{coord: []call{sh("ln -s ../../../../outside/secret.txt leak.txt; echo mine > mine.txt")}}
		},
		"symlink to a secret directory outside": func(out string) team {
			return team{coord: []call{sh("ln -s " + out + " leakdir; mkdir d; echo mine > d/mine.txt")}}
		},
		"symlink to /proc/self/environ (massgen's, when massgen follows it)": func(out string) team {
			return team{coord: []call{sh("ln -s /proc/self/environ environ; echo mine > mine.txt")}}
		},
		"symlink to /proc/<massgen>/environ via /proc/self/cwd": func(out string) team {
			return team{coord: []call{sh("ln -s /proc/self/cwd/../../../../outside/secret.txt cwdleak; echo mine > mine.txt")}}
		},
		"symlinks planted by the MCP server": func(out string) team {
			return team{mcp: evilServer("ln -s " + filepath.Join(out, "secret.txt") + " srvleak.txt; ln -s " + out + " srvdir; ln -s /proc/self/environ srvenv"),
				coord: []call{mcpRun("echo mine > mine.txt")}}
		},
		"directory swapped for a symlink while the snapshot copies (MCP server in the background)": func(out string) team {
			swap := fmt.Sprintf("mkdir -p d; for i in $(seq 200); do echo x > d/f$i; done; "+
				"(while :; do mv d d.real 2>/dev/null; ln -sfn %q d; sleep 0.001; rm -f d; mv d.real d 2>/dev/null; done) > /dev/null 2>&1 &", out)
			return team{mcp: evilServer(swap), coord: []call{mcpRun("sleep 1; echo mine > mine.txt")}}
		},
		"file swapped for a symlink while the snapshot copies (MCP server in the background)": func(out string) team {
			swap := fmt.Sprintf("for i in $(seq 200); do echo x > f$i; done; "+
				"(while :; do for i in $(seq 200); do ln -sf %q f$i.l; mv -f f$i.l f$i; done; for i in $(seq 200); do echo x > f$i.n; mv -f f$i.n f$i; done; done) > /dev/null 2>&1 &", filepath.Join(out, "secret.txt"))
			return team{mcp: evilServer(swap), coord: []call{mcpRun("sleep 1; echo mine > mine.txt")}}
		},
	}
	for name, mk := range attacks {
		attempt(t, name, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			out := filepath.Join(dir, plantedDir)
			writeFiles(t, dir, map[string]string{plantedDir + "/secret.txt": "outside secret " + canary})
			before := snap(t, out)
			r := runTeam(t, dir, mk(out), runOpts{})
			if _, ok := wsFile(dir, "mine.txt"); !ok {
				if _, ok := wsFile(dir, "d/mine.txt"); !ok {
					t.Logf("the attempt did not run:\n%s", r)
				}
			}
			noCanary(t, r)
			unchanged(t, "the outside directory", out, before)
		})
	}
	// Links inside a write context path: its backup holds no secret.
	for name, link := range map[string]func(out string) (string, string){
		"context path: symlink to a secret file": func(out string) (string, string) { return "link.txt", filepath.Join(out, "secret.txt") },
		"context path: symlink to a secret dir":  func(out string) (string, string) { return "linkdir", out },
		"context path: symlink to /proc/self/environ": func(out string) (string, string) {
			return "environ", "/proc/self/environ"
		},
	} {
		attempt(t, name, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			out := filepath.Join(dir, plantedDir)
			proj := filepath.Join(dir, "proj")
			writeFiles(t, dir, map[string]string{plantedDir + "/secret.txt": "outside secret " + canary, "proj/main.go": "package main\n"})
			n, target := link(out)
			must(t, os.Symlink(target, filepath.Join(proj, n)))
			r := runTeam(t, dir, team{contexts: []map[string]any{{"path": proj, "permission": "write"}},
				present: []call{sh("printf changed > " + filepath.Join(proj, "main.go"))}}, runOpts{})
			if !strings.Contains(r.stderr, "context path change") {
				t.Logf("no context change reported:\n%s", r)
			}
			noCanary(t, r)
		})
	}
}
