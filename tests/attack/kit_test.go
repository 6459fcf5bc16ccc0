package attack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kitTeam runs s with orchestrator.coordination set to coordination
// (filesystem memory, skills).
func kitTeam(t *testing.T, dir string, s team, coordination map[string]any) result {
	t.Helper()
	var cfg map[string]any
	must(t, json.Unmarshal(s.yaml(), &cfg))
	orch, _ := cfg["orchestrator"].(map[string]any)
	if orch == nil {
		orch = map[string]any{}
	}
	orch["coordination"] = coordination
	cfg["orchestrator"] = orch
	b, _ := json.MarshalIndent(cfg, "", " ")
	must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), b, 0o644))
	return massgen(t, dir, runOpts{}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
}

// Skills: a skill that is a link out of the skills directory (a whole
// skill, or its SKILL.md) is neither offered nor readable, by the file
// tools or inside the sandbox; the skills directories are read-only while
// coordinating, the shipped ones always; the presenter, who may write the
// project's skills directory, cannot write through a link out of it.
func TestSkillsEscapes(t *testing.T) {
	needBwrap(t)
	dir := tempDir(t)
	proj := filepath.Join(dir, ".agent", "skills")
	out := filepath.Join(dir, plantedDir)
	const secret = "SKILL-SECRET-7f3a"
	writeFiles(t, out, map[string]string{"evil/SKILL.md": "---\nname: evil\ndescription: " + secret + "\n---\n" + secret,
		"loose.md": "---\nname: loose\ndescription: x\n---\n" + secret})
	writeFiles(t, proj, map[string]string{"good/SKILL.md": "---\nname: good\ndescription: fine\n---\nbody"})
	must(t, os.Symlink(filepath.Join(out, "evil"), filepath.Join(proj, "evil")))
	must(t, os.MkdirAll(filepath.Join(proj, "linked"), 0o755))
	must(t, os.Symlink(filepath.Join(out, "loose.md"), filepath.Join(proj, "linked", "SKILL.md")))
	builtin := filepath.Join(dir, ".massgen", "skills") // the shipped skills land in a directory inside
	s := team{
		coord: []call{
			tc("read_file", map[string]any{"path": filepath.Join(proj, "evil", "SKILL.md")}),
			tc("read_file", map[string]any{"path": filepath.Join(proj, "linked", "SKILL.md")}),
			sh("cat " + filepath.Join(proj, "evil", "SKILL.md") + " " + filepath.Join(proj, "linked", "SKILL.md")),
			tc("write_file", map[string]any{"path": filepath.Join(proj, "good", "SKILL.md"), "content": "hijacked"}),
			sh("echo hijacked > " + filepath.Join(proj, "good", "SKILL.md") + "; mkdir " + filepath.Join(proj, "new")),
			sh("for f in " + builtin + "/*/*/SKILL.md; do echo hijacked > $f; done"),
		},
		present: []call{
			tc("write_file", map[string]any{"path": filepath.Join(proj, "evil", "pwn.md"), "content": "pwn"}),
			tc("write_file", map[string]any{"path": filepath.Join(proj, "linked", "SKILL.md"), "content": "pwn"}),
			sh("echo pwn > " + filepath.Join(proj, "evil", "pwn2.md") + "; echo pwn > " + filepath.Join(proj, "linked", "SKILL.md")),
			sh("for f in " + builtin + "/*/*/SKILL.md; do echo hijacked > $f; done"),
		},
	}
	coordination := map[string]any{"use_skills": true, "skills_directory": ".agent/skills"}
	// A first run installs the shipped skills; the attack is the second.
	kitTeam(t, dir, team{}, coordination)
	beforeOut, beforeBuiltin := snap(t, out), snap(t, builtin)
	beforeGood := snap(t, filepath.Join(proj, "good"))
	r := kitTeam(t, dir, s, coordination)
	attempt(t, "a linked skill's text reaches no model, output or file", func(t *testing.T) {
		if r.code != 0 {
			t.Fatalf("the run failed: %s", r)
		}
		noSecret(t, secret, r)
		// The attacks ran and were refused (not skipped by a failed run).
		for _, want := range []string{"writable only by the winner during the final presentation", "Read-only file system", "leads out of"} {
			if len(grepTree(filepath.Join(dir, "logs"), want)) == 0 {
				t.Errorf("no tool result in the logs says %q", want)
			}
		}
	})
	attempt(t, "a linked skill is not offered, with a warning", func(t *testing.T) {
		if !strings.Contains(r.stderr, "evil is a symbolic link: not offered") || !strings.Contains(r.stderr, "linked/SKILL.md: not a regular file") {
			t.Errorf("no warning naming the linked skills:\n%s", tail(r.stderr, 3000))
		}
	})
	attempt(t, "the project's skills are read-only while coordinating", func(t *testing.T) {
		unchanged(t, "the project's skill", filepath.Join(proj, "good"), beforeGood)
		if _, err := os.Lstat(filepath.Join(proj, "new")); !os.IsNotExist(err) {
			t.Errorf("a command made a directory in the skills directory: %v", err)
		}
	})
	attempt(t, "the presenter cannot write through a linked skill", func(t *testing.T) {
		unchanged(t, "the directory the links point to", out, beforeOut)
	})
	attempt(t, "the shipped skills are never writable", func(t *testing.T) {
		unchanged(t, "the shipped skills", builtin, beforeBuiltin)
	})
}

// Memory: a memory path with `..` reaches nothing outside the workspace;
// with learning_capture_mode final_only and verification_and_final_only
// the memory directory is read-only while coordinating, to the file tools
// and to commands alike, and the verification memo cannot be turned into
// a link that writes elsewhere.
func TestMemoryEscapes(t *testing.T) {
	needBwrap(t)
	for _, mode := range []string{"final_only", "verification_and_final_only"} {
		dir := tempDir(t)
		out := filepath.Join(dir, plantedDir)
		writeFiles(t, out, map[string]string{"secret.txt": "MEMORY-SECRET", "notes.md": "mine"})
		memo := "memory/short_term/verification_latest.md"
		s := team{
			coord: []call{
				tc("write_file", map[string]any{"path": "memory/../../../../" + plantedDir + "/notes.md", "content": "pwn"}),
				tc("write_file", map[string]any{"path": "memory/short_term/../../../../../" + plantedDir + "/new.md", "content": "pwn"}),
				tc("write_file", map[string]any{"path": "memory/long_term/lesson.md", "content": "too early"}),
				sh("echo pwn > memory/short_term/x.md; mkdir memory/long_term/d; rm -rf memory/long_term"),
				sh("ln -sf " + filepath.Join(out, "notes.md") + " " + memo + "; echo pwn > " + memo),
				tc("write_file", map[string]any{"path": memo, "content": "memo"}),
			},
		}
		r := kitTeam(t, dir, s, map[string]any{"enable_memory_filesystem_mode": true, "learning_capture_mode": mode})
		ws := workspaceOf(dir)
		attempt(t, mode+": memory paths with .. stay in the workspace", func(t *testing.T) {
			if r.code != 0 || ws == "" {
				t.Fatalf("the run failed: %s", r)
			}
			for _, want := range []string{"it is outside every directory", "writable only by the winner during the final presentation", "Read-only file system"} {
				if len(grepTree(filepath.Join(dir, "logs"), want)) == 0 {
					t.Errorf("no tool result in the logs says %q", want)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(out, "notes.md")); string(b) != "mine" {
				t.Errorf("outside/notes.md = %q", b)
			}
			if _, err := os.Lstat(filepath.Join(out, "new.md")); !os.IsNotExist(err) {
				t.Errorf("outside/new.md was made: %v", err)
			}
		})
		attempt(t, mode+": memory is read-only while coordinating", func(t *testing.T) {
			for _, p := range []string{"memory/long_term/lesson.md", "memory/short_term/x.md", "memory/long_term/d"} {
				if _, err := os.Lstat(filepath.Join(ws, p)); !os.IsNotExist(err) {
					t.Errorf("%s exists: %v", p, err)
				}
			}
			if fi, err := os.Stat(filepath.Join(ws, "memory", "long_term")); err != nil || !fi.IsDir() {
				t.Errorf("memory/long_term was removed: %v", err)
			}
		})
		attempt(t, mode+": the memo is no way out", func(t *testing.T) {
			fi, err := os.Lstat(filepath.Join(ws, memo))
			if mode == "final_only" {
				if err == nil && fi.Size() > 0 {
					t.Errorf("final_only: the memo was written")
				}
				return
			}
			if err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the memo is not a regular file: %v %v", fi, err)
			}
		})
	}
}
