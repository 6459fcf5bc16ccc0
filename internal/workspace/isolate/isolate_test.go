//go:build linux

package isolate

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// gitRepo makes a repository with a commit, an ignored build output, an
// untracked file, an uncommitted edit, and a post-checkout hook that would
// leave a mark if anything ever ran it.
func gitRepo(t *testing.T) (repo, mark string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	repo, mark = filepath.Join(root, "repo"), filepath.Join(root, "hook-ran")
	files := map[string]string{
		"README.md":   "# demo\nold line\n",
		"src/main.go": "package main\n",
		".gitignore":  "build/\n",
	}
	for p, c := range files {
		write(t, filepath.Join(repo, p), c)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	run("add", "-A")
	run("commit", "-q", "-m", "init")
	write(t, filepath.Join(repo, "build/out.bin"), "ignored output")
	write(t, filepath.Join(repo, "notes.txt"), "untracked notes\n")
	write(t, filepath.Join(repo, "src/main.go"), "package main\n\n// uncommitted\n")
	for _, h := range []string{"post-checkout", "pre-commit", "post-commit", "post-merge", "reference-transaction", "fsmonitor-watchman"} {
		p := filepath.Join(repo, ".git/hooks", h)
		write(t, p, "#!/bin/sh\necho "+h+" >> "+mark+"\n")
		must(t, os.Chmod(p, 0o755))
	}
	return repo, mark
}

func write(t *testing.T, p, c string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(c), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// guardFor is the winner's Guard over repo, its presentation open.
func guardFor(t *testing.T, repo string) *workspace.Guard {
	t.Helper()
	g, err := workspace.New(workspace.Policy{Agent: "winner", Workspace: t.TempDir(),
		Context: []workspace.ContextPath{{Path: repo, Write: true, ProtectedNames: []string{".git", ".env*", ".massgen"}}}})
	must(t, err)
	return g
}

func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	must(t, workspace.WalkTree(root, func(rel string, e *workspace.TreeEntry) error {
		if e.Mode.IsRegular() {
			out = append(out, rel)
		}
		return nil
	}))
	slices.Sort(out)
	return out
}

// round is an agent's round: a fresh copy in its workspace, edits, a
// snapshot with its diff.
func round(t *testing.T, s *Session, ws, snap string, edit func(tree string)) {
	t.Helper()
	must(t, s.Round(ws))
	edit(s.Contexts()[0].Tree(ws))
	_, err := workspace.CopyTree(ws, snap, workspace.Clone, 1<<30)
	must(t, err)
	must(t, s.Annotate(t.Context(), snap, ws))
}

// Three agents' rounds on a real repository: each gets git's view of it
// (tracked files with the uncommitted edit, the untracked file, not the
// ignored output nor .git), edits its own copy, and its snapshot carries
// the diff the others are shown; a second round starts fresh. The
// winner's changes are then applied under each drift policy while the
// user has edited one of the same files meanwhile; the hostile agent's
// .git hooks, links and scratch files are never applied, and no hook of
// the repository ever runs.
func TestThreeAgentsRoundsAndEveryDriftPolicy(t *testing.T) {
	for _, policy := range []Policy{Skip, PreferPresenter, Fail} {
		t.Run(string(policy), func(t *testing.T) {
			repo, mark := gitRepo(t)
			s, warnings, err := New(t.Context(), filepath.Join(t.TempDir(), "iso"), Auto, []string{repo}, nil)
			must(t, err)
			defer s.Close()
			c := s.Contexts()[0]
			if len(warnings) > 0 || c.Kind != KindGit {
				t.Fatalf("kind %s, warnings %v", c.Kind, warnings)
			}
			if got, want := files(t, c.base), []string{".gitignore", "README.md", "notes.txt", "src/main.go"}; !slices.Equal(got, want) {
				t.Fatalf("base holds %v, want %v", got, want)
			}
			snaps := t.TempDir()
			ws := map[string]string{}
			for _, a := range []string{"a", "b", "c"} {
				ws[a] = filepath.Join(t.TempDir(), a)
				must(t, os.Mkdir(ws[a], 0o755))
			}
			// Round 1: a edits the README and adds a file; b deletes a
			// file; c is hostile.
			round(t, s, ws["a"], filepath.Join(snaps, "a1"), func(tree string) {
				if got := read(t, filepath.Join(tree, "src/main.go")); !strings.Contains(got, "uncommitted") {
					t.Errorf("the copy lacks the user's uncommitted edit: %q", got)
				}
				write(t, filepath.Join(tree, "README.md"), "# demo\nnew line by a\n")
				write(t, filepath.Join(tree, "docs/guide.md"), "guide\n")
				write(t, filepath.Join(tree, Scratch, "verification/test.log"), "ok\n")
			})
			round(t, s, ws["b"], filepath.Join(snaps, "b1"), func(tree string) {
				must(t, os.Remove(filepath.Join(tree, "notes.txt")))
			})
			round(t, s, ws["c"], filepath.Join(snaps, "c1"), func(tree string) {
				write(t, filepath.Join(tree, ".git/hooks/post-checkout"), "#!/bin/sh\necho pwned >> "+mark+"\n")
				must(t, os.Chmod(filepath.Join(tree, ".git/hooks/post-checkout"), 0o755))
				must(t, os.Symlink(filepath.Join(repo, ".git/hooks"), filepath.Join(tree, "hooks")))
				must(t, os.Remove(filepath.Join(tree, "README.md")))
				must(t, os.Symlink(filepath.Join(repo, "README.md"), filepath.Join(tree, "README.md")))
				write(t, filepath.Join(tree, ".gitattributes"), "* filter=evil diff=evil\n")
			})
			diffA := read(t, filepath.Join(snaps, "a1", Dir, "ctx_1.diff"))
			for _, want := range []string{"--- a/README.md", "+++ b/README.md", "-old line", "+new line by a", "+++ b/docs/guide.md", "# added    docs/guide.md"} {
				if !strings.Contains(diffA, want) {
					t.Errorf("a's diff lacks %q:\n%s", want, diffA)
				}
			}
			if strings.Contains(diffA, Scratch) || strings.Contains(diffA, c.base) {
				t.Errorf("a's diff shows the scratch directory or the base's path:\n%s", diffA)
			}
			if d := read(t, filepath.Join(snaps, "b1", Dir, "ctx_1.diff")); !strings.Contains(d, "+++ /dev/null") || !strings.Contains(d, "# deleted  notes.txt") {
				t.Errorf("b's diff:\n%s", d)
			}
			diffC := read(t, filepath.Join(snaps, "c1", Dir, "ctx_1.diff"))
			for _, want := range []string{"# refused  .git", "# refused  README.md (a symbolic link", "# refused  hooks (a symbolic link", "# added    .gitattributes"} {
				if !strings.Contains(diffC, want) {
					t.Errorf("c's diff lacks %q:\n%s", want, diffC)
				}
			}
			// Round 2 starts from the run's start again, not from round 1.
			must(t, s.Round(ws["a"]))
			if got := read(t, filepath.Join(c.Tree(ws["a"]), "README.md")); got != "# demo\nold line\n" {
				t.Errorf("round 2 starts from %q", got)
			}

			// The user edits the README meanwhile; the winner is a.
			write(t, filepath.Join(repo, "README.md"), "# demo\nthe user's edit\n")
			before := wstest.Snapshot(t, repo)
			g := guardFor(t, repo)
			g.SetFinalPresentation(true)
			res, err := s.Apply(filepath.Join(snaps, "a1"), g, policy)
			g.SetFinalPresentation(false)
			must(t, err)
			if len(res) != 1 || len(res[0].Drifted) != 1 || res[0].Drifted[0].Path != "README.md" {
				t.Fatalf("drift: %+v", res)
			}
			readme, guide := read(t, filepath.Join(repo, "README.md")), filepath.Join(repo, "docs/guide.md")
			switch policy {
			case Skip:
				if readme != "# demo\nthe user's edit\n" || read(t, guide) != "guide\n" || res[0].Failed {
					t.Errorf("skip: README %q, result %+v", readme, res[0])
				}
			case PreferPresenter:
				if readme != "# demo\nnew line by a\n" || read(t, guide) != "guide\n" {
					t.Errorf("prefer_presenter: README %q", readme)
				}
			case Fail:
				if !res[0].Failed || len(res[0].Applied) != 0 {
					t.Errorf("fail: %+v", res[0])
				}
				wstest.Unchanged(t, repo, before)
			}
			if _, err := os.Stat(filepath.Join(repo, Scratch)); err == nil {
				t.Error("the scratch directory was applied")
			}

			// The hostile copy: nothing of it reaches the repository.
			before = wstest.Snapshot(t, repo)
			g.SetFinalPresentation(true)
			res, err = s.Apply(filepath.Join(snaps, "c1"), g, PreferPresenter)
			g.SetFinalPresentation(false)
			must(t, err)
			var refused []string
			for _, ch := range res[0].Refused {
				refused = append(refused, ch.Path)
			}
			if !slices.Contains(refused, "README.md") || !slices.Contains(refused, "hooks") || !slices.ContainsFunc(refused, func(p string) bool { return strings.HasPrefix(p, ".git") }) {
				t.Errorf("refused %v", refused)
			}
			// Only .gitattributes (a plain file of the project) may be
			// added; no hook, no link, the README untouched.
			for _, line := range treeDiff(before, wstest.Snapshot(t, repo)) {
				if !strings.Contains(line, ".gitattributes") {
					t.Errorf("the hostile copy changed the repository: %s", line)
				}
			}
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("a hook ran: %s", read(t, mark))
			}
		})
	}
}

// A directory that is not a repository gets a whole copy (.git and
// .massgen left out) in auto and isolated modes, and worktree mode says so.
func TestShadowCopyOfAPlainDirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	write(t, filepath.Join(dir, "build/out.bin"), "x")
	write(t, filepath.Join(dir, ".massgen/workspaces/w"), "run's own")
	write(t, filepath.Join(dir, ".env"), "SECRET=1")
	write(t, filepath.Join(dir, "sub/.env.local"), "SECRET=2")
	for _, mode := range []Mode{Auto, Isolated, Worktree} {
		s, warnings, err := New(t.Context(), filepath.Join(t.TempDir(), "iso"), mode, []string{dir}, nil)
		must(t, err)
		c := s.Contexts()[0]
		if c.Kind != KindShadow || (mode == Worktree) != (len(warnings) == 1) {
			t.Errorf("%s: kind %s, warnings %v", mode, c.Kind, warnings)
		}
		if got := files(t, c.base); !slices.Equal(got, []string{"a.txt", "build/out.bin"}) {
			t.Errorf("%s: base %v", mode, got)
		}
		s.Close()
	}
}

// An agent's process that swaps .worktree for a link to the user's files
// between rounds does not get the next copy laid there, nor the old one
// removed from there.
func TestRoundDoesNotFollowAPlantedLink(t *testing.T) {
	repo, _ := gitRepo(t)
	s, _, err := New(t.Context(), filepath.Join(t.TempDir(), "iso"), Isolated, []string{repo}, nil)
	must(t, err)
	defer s.Close()
	ws := t.TempDir()
	victim := t.TempDir()
	write(t, filepath.Join(victim, "ctx_1/keep.txt"), "the user's")
	before := wstest.Snapshot(t, victim)
	must(t, os.Symlink(victim, filepath.Join(ws, Dir)))
	must(t, s.Round(ws))
	wstest.Unchanged(t, victim, before)
	if fi, err := os.Lstat(filepath.Join(ws, Dir)); err != nil || !fi.IsDir() {
		t.Fatalf("%s is not a directory now: %v", Dir, err)
	}
	if got := read(t, filepath.Join(ws, Dir, "ctx_1/README.md")); !strings.Contains(got, "old line") {
		t.Errorf("copy: %q", got)
	}
}

// treeDiff lists the lines of two fingerprints that differ.
func treeDiff(before, after wstest.Tree) []string {
	var out []string
	for _, l := range before {
		if !slices.Contains(after, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			out = append(out, "+ "+l)
		}
	}
	return out
}

// A write context path that is a single file: the copy holds that file
// alone, and only that file is applied back.
func TestSingleFileContextPath(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "notes.md")
	write(t, f, "v1\n")
	write(t, filepath.Join(dir, "sibling.txt"), "not shared")
	s, _, err := New(t.Context(), filepath.Join(t.TempDir(), "iso"), Auto, []string{f}, nil)
	must(t, err)
	defer s.Close()
	ws, snap := t.TempDir(), filepath.Join(t.TempDir(), "snap")
	must(t, s.Round(ws))
	tree := s.Contexts()[0].Tree(ws)
	if got := files(t, tree); !slices.Equal(got, []string{"notes.md"}) {
		t.Fatalf("the copy holds %v", got)
	}
	write(t, filepath.Join(tree, "notes.md"), "v2\n")
	write(t, filepath.Join(tree, "other.txt"), "extra")
	_, err = workspace.CopyTree(ws, snap, workspace.Clone, 1<<30)
	must(t, err)
	before := wstest.Snapshot(t, dir)
	g, err := workspace.New(workspace.Policy{Agent: "winner", Workspace: t.TempDir(), Context: []workspace.ContextPath{{Path: f, Write: true}}})
	must(t, err)
	g.SetFinalPresentation(true)
	res, err := s.Apply(snap, g, Skip)
	g.SetFinalPresentation(false)
	must(t, err)
	if read(t, f) != "v2\n" || len(res[0].Applied) != 1 || len(res[0].Refused) != 1 || res[0].Refused[0].Path != "other.txt" {
		t.Errorf("notes.md %q, result %+v", read(t, f), res[0])
	}
	for _, line := range treeDiff(before, wstest.Snapshot(t, dir)) {
		if !strings.Contains(line, "notes.md") {
			t.Errorf("outside the shared file: %s", line)
		}
	}
}

// A winner whose copy is gone (removed, or swapped for a link, which a
// snapshot leaves out) has nothing applied, and the result says so.
func TestApplyWithoutACopy(t *testing.T) {
	repo, _ := gitRepo(t)
	s, _, err := New(t.Context(), filepath.Join(t.TempDir(), "iso"), Auto, []string{repo}, nil)
	must(t, err)
	defer s.Close()
	snap := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(snap, Dir), 0o755))
	must(t, os.Symlink(repo, filepath.Join(snap, Dir, "ctx_1")))
	before := wstest.Snapshot(t, repo)
	g := guardFor(t, repo)
	g.SetFinalPresentation(true)
	res, err := s.Apply(snap, g, PreferPresenter)
	g.SetFinalPresentation(false)
	must(t, err)
	if !res[0].Missing || len(res[0].Applied) != 0 {
		t.Errorf("result %+v", res[0])
	}
	wstest.Unchanged(t, repo, before)
}
