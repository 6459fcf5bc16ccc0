package isolate

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/massgen/massgen/internal/workspace"
)

// Mode is coordination.write_mode, but legacy (no isolation), which the
// caller handles by making no Session.
type Mode string

// The modes of write_mode that isolate.
const (
	Auto     Mode = "auto"     // git's view of a repository, a whole copy elsewhere
	Worktree Mode = "worktree" // git's view; a whole copy, with a warning, for a non-repository
	Isolated Mode = "isolated" // always a whole copy
)

// Dir is where, in a workspace, the agent's copies of the context paths
// are: Dir/ctx_1, Dir/ctx_2… in the order of the paths given to New.
const Dir = ".worktree"

// Scratch is the directory of each copy for experiments, never applied.
const Scratch = ".massgen_scratch"

// MaxBytes caps one base (and so one round's copy).
const MaxBytes = 1 << 30

// Kinds of copy.
const (
	KindGit    = "worktree" // the files git tracks or would track
	KindShadow = "shadow"   // the whole directory
)

// Context is one writable context path of a Session.
type Context struct {
	Name   string // ctx_<n>: its directory under Dir
	Source string // the real context path (a directory or a file)
	Kind   string // KindGit or KindShadow
	file   bool   // Source is a single file: the copy holds it alone
	base   string // massgen's pristine copy
	sums   map[string]sig
}

// sig is what a regular file of a tree holds.
type sig struct {
	sum  [32]byte
	exec bool
}

// Session is the isolated copies of one run.
type Session struct {
	dir   string // massgen's own: base/, stage/, home/
	home  string // git's HOME and working directory: empty
	ctxs  []*Context
	seq   atomic.Int64
	trash string
	// carried are, by copy in a workspace, what the snapshot a Reset laid
	// it from could not carry (its .refused list): Keep reports them too.
	mu      sync.Mutex
	carried map[string][]byte
}

// New makes the bases of the writable context paths (real paths) under
// dir, which must be massgen's own, hidden from the agents. skip leaves
// out what the run itself owns inside a context path (its workspaces and
// logs), by absolute path. Warnings say where mode could not be followed.
func New(ctx context.Context, dir string, mode Mode, paths []string, skip func(abs string) bool) (*Session, []string, error) {
	s := &Session{dir: dir, home: filepath.Join(dir, "home"), trash: filepath.Join(dir, "stage"), carried: map[string][]byte{}}
	for _, d := range []string{s.home, s.trash, filepath.Join(dir, "base")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, nil, err
		}
	}
	var warnings []string
	for i, p := range paths {
		c := &Context{Name: "ctx_" + strconv.Itoa(i+1), Source: p, Kind: KindShadow}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("write_mode: context path %s: %w", p, err)
		}
		c.file = !fi.IsDir()
		gitDir := p
		if c.file {
			gitDir = filepath.Dir(p)
		}
		repo := mode != Isolated && repoOf(ctx, gitDir, s.home)
		switch {
		case repo:
			c.Kind = KindGit
		case mode == Worktree:
			warnings = append(warnings, fmt.Sprintf("write_mode: worktree: context path %s is not in a git repository "+
				"(or git cannot read it); its agents' copies are whole copies of it instead", p))
		}
		c.base = filepath.Join(dir, "base", c.Name)
		if err := s.makeBase(ctx, c, skip); err != nil {
			s.Close()
			return nil, nil, fmt.Errorf("write_mode: copying context path %s: %w", p, err)
		}
		s.ctxs = append(s.ctxs, c)
	}
	return s, warnings, nil
}

// Contexts are the session's context paths, in order.
func (s *Session) Contexts() []*Context { return s.ctxs }

// Tree is the directory of c's copy in the workspace ws.
func (c *Context) Tree(ws string) string { return filepath.Join(ws, Dir, c.Name) }

// Close removes the bases and staging directories.
func (s *Session) Close() error { return os.RemoveAll(s.dir) }

// never are the names never copied into a base nor applied back, at any
// depth: version control, massgen's own directories, and .env files (the
// Guard's protected names: a copy would carry the user's secrets into the
// workspace, its snapshots and the logs; the real ones stay readable where
// they are).
func never(name string) bool {
	return name == ".git" || name == ".massgen" || strings.HasPrefix(name, ".env")
}

func (s *Session) makeBase(ctx context.Context, c *Context, skip func(string) bool) error {
	src := c.Source
	var listed map[string]bool
	if c.Kind == KindGit {
		gitDir := src
		if c.file {
			gitDir = filepath.Dir(src)
		}
		files, err := gitFiles(ctx, gitDir, s.home)
		if err != nil {
			return err
		}
		listed = files
	}
	if c.file {
		// A single shared file: the copy is a directory holding it alone.
		if err := os.Mkdir(c.base, 0o755); err != nil {
			return err
		}
		name := filepath.Base(src)
		if listed == nil || listed[name] {
			if err := copyFile(src, filepath.Join(c.base, name)); err != nil {
				return err
			}
		}
	} else {
		// Directories leading to a listed file are kept.
		dirs := map[string]bool{}
		for f := range listed {
			for d := filepath.Dir(f); d != "." && d != "/" && !dirs[d]; d = filepath.Dir(d) {
				dirs[d] = true
			}
		}
		_, err := workspace.CopyTreeWith(src, c.base, workspace.CopyOptions{Mode: workspace.Clone, Limit: MaxBytes,
			Skip: func(rel string, dir bool) bool {
				if never(filepath.Base(rel)) || skip != nil && skip(filepath.Join(src, rel)) {
					return true
				}
				if listed == nil {
					return false
				}
				if dir {
					return !dirs[rel]
				}
				return !listed[rel]
			}})
		if errors.Is(err, workspace.ErrTooLarge) {
			return fmt.Errorf("it holds more than %d MiB, the cap of an isolated copy", MaxBytes>>20)
		}
		if err != nil {
			return err
		}
	}
	sums, err := manifest(c.base)
	c.sums = sums
	return err
}

// copyFile copies one regular file, not through a link.
func copyFile(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return cmpErr(err, fmt.Errorf("%s is not a regular file", src))
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, MaxBytes)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// manifest sums the regular files under root (links and special files
// left out; they are never applied).
func manifest(root string) (map[string]sig, error) {
	out := map[string]sig{}
	err := workspace.WalkTree(root, func(rel string, e *workspace.TreeEntry) error {
		if !e.Mode.IsRegular() {
			return nil
		}
		sg, err := sum(e)
		if err != nil {
			return err
		}
		out[rel] = sg
		return nil
	})
	return out, err
}

func sum(e *workspace.TreeEntry) (sig, error) {
	f, err := e.Open()
	if err != nil {
		return sig{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sig{}, err
	}
	var sg sig
	copy(sg.sum[:], h.Sum(nil))
	sg.exec = e.Mode.Perm()&0o111 != 0
	return sg, nil
}

// Round lays a fresh copy of every base into the workspace ws, replacing
// what the agent's last round left there: each round starts from the
// context paths as the run found them (upstream's per-round worktrees).
func (s *Session) Round(ws string) error {
	for _, c := range s.ctxs {
		if err := s.lay(ws, c, c.base); err != nil {
			return fmt.Errorf("write_mode: a fresh copy of %s: %w", c.Source, err)
		}
		s.carry(c.Tree(ws), nil)
	}
	return nil
}

// Reset lays into ws the copies held by snap (a snapshot of the same
// agent's workspace, massgen's own), or fresh ones where it has none: the
// presenter continues from its winning answer.
func (s *Session) Reset(ws, snap string) error {
	for _, c := range s.ctxs {
		src := c.base
		var refused []byte
		if snap != "" {
			if fi, err := os.Lstat(c.Tree(snap)); err == nil && fi.IsDir() {
				src = c.Tree(snap)
				refused, _ = os.ReadFile(c.Tree(snap) + ".refused")
			}
		}
		if err := s.lay(ws, c, src); err != nil {
			return fmt.Errorf("write_mode: restoring the copy of %s: %w", c.Source, err)
		}
		s.carry(c.Tree(ws), refused)
	}
	return nil
}

// lay copies src to a staging directory and moves it into ws as c's copy.
func (s *Session) lay(ws string, c *Context, src string) error {
	stage := filepath.Join(s.trash, "s"+strconv.FormatInt(s.seq.Add(1), 10))
	if _, err := workspace.CopyTree(src, stage, workspace.Clone, MaxBytes); err != nil {
		os.RemoveAll(stage)
		return err
	}
	if err := os.MkdirAll(filepath.Join(stage, Scratch, "verification"), 0o755); err != nil {
		os.RemoveAll(stage)
		return err
	}
	old := filepath.Join(s.trash, "old"+strconv.FormatInt(s.seq.Add(1), 10))
	if err := os.Mkdir(old, 0o700); err != nil {
		os.RemoveAll(stage)
		return err
	}
	err := place(ws, c.Name, stage, old)
	os.RemoveAll(old) // the last round's copy, moved out of the workspace
	if err != nil {
		os.RemoveAll(stage)
	}
	return err
}

func (s *Session) carry(tree string, refused []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if refused == nil {
		delete(s.carried, tree)
		return
	}
	s.carried[tree] = refused
}
