package workspace

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Policy is what one agent may touch. Every path is a directory except
// context paths and protected paths, which may be files; relative paths
// are relative to the process's working directory.
type Policy struct {
	// Agent names the agent in refusals.
	Agent string
	// Workspace is the agent's own directory: readable and writable. It
	// must exist. Relative paths given to the guard are relative to it.
	Workspace string
	// ReadOnly directories: the others' snapshots, extra read access.
	ReadOnly []string
	// Context paths of the run (orchestrator.context_paths).
	Context []ContextPath
	// Hidden paths are neither readable nor writable even inside another
	// allowed directory, for example the run's directory of live
	// workspaces when a context path contains it. A more specific allowed
	// directory inside a hidden one (the agent's own workspace, a
	// snapshot) still grants its access.
	Hidden []string
	// Writable are files or directories, inside a part of the policy
	// that is read-only now (a write context path), that stay writable
	// whatever the phase: the verification memo inside a memory directory
	// closed for the rounds (internal/kit/memory). Each must exist.
	Writable []string
	// MaxBytes bounds what the workspace may hold (0 = DefaultMaxBytes):
	// a file tool's write that would pass it is refused.
	MaxBytes int64
}

// DefaultMaxBytes is a workspace's size limit unless the config sets one
// (workspace_max_size_mb): the snapshot cap, since a larger workspace
// could not be shown to the others anyway.
const DefaultMaxBytes = 1 << 30

// ContextPath is a directory (or a single file) of the user's the team may
// read, and the winner may write during the final presentation when Write
// is set. For a file, only that file is shared, not its siblings.
type ContextPath struct {
	Path  string
	Write bool
	// Protected paths (files or directories, inside Path) are never
	// writable, whatever the phase, whether or not they exist yet.
	Protected []string
	// ProtectedNames are names (path.Match patterns: ".git", ".env*")
	// never writable at any depth of a write context path, existing or
	// not (protected.go).
	ProtectedNames []string
}

// Access is what a guard allows at a path now.
type Access int

// Access levels, in order.
const (
	None Access = iota
	Read
	Write
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return "none"
}

type kind int

const (
	kindWorkspace kind = iota
	kindReadOnly
	kindContextRead
	kindContextWrite
	kindProtected
	kindHidden
	kindFileParent // the directory of a file context path: grants nothing
)

// rule is one path of the policy, by its real path.
type rule struct {
	path  string
	kind  kind
	file  bool     // a file context path, or a writable file (Policy.Writable)
	names []string // of a write context path: protected names
	dir   bool     // of a protected path: a directory (it ends with a slash, or is one)
}

// isRoot says whether operations may start from this rule's directory.
func (r rule) isRoot() bool { return r.kind <= kindContextWrite && !r.file || r.kind == kindFileParent }

// Guard enforces one agent's Policy. It is safe for concurrent use.
type Guard struct {
	agent     string
	workspace string
	maxBytes  int64
	rules     []rule // longest path first, so the first match is the deepest
	presenter atomic.Bool

	mu      sync.Mutex
	created map[fileID]bool // files this agent wrote into existence
	read    map[fileID]bool // files this agent read
	pres    presentation    // the protected entries of the open presentation
}

// fileID names a file independently of its path.
type fileID struct{ dev, ino uint64 }

// New checks a policy and builds its guard. Every directory must exist and
// be a directory; a protected path must lie inside its context path.
func New(p Policy) (*Guard, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	if p.Workspace == "" {
		return nil, errors.New("workspace: the policy has no workspace directory")
	}
	g := &Guard{agent: p.Agent, created: map[fileID]bool{}, read: map[fileID]bool{}}
	if g.agent == "" {
		g.agent = "this agent"
	}
	ws, err := realDir(p.Workspace, "workspace")
	if err != nil {
		return nil, err
	}
	g.workspace = ws
	g.maxBytes = cmp.Or(p.MaxBytes, DefaultMaxBytes)
	g.rules = append(g.rules, rule{path: ws, kind: kindWorkspace})
	for _, d := range p.ReadOnly {
		r, err := realDir(d, "read-only directory")
		if err != nil {
			return nil, err
		}
		g.rules = append(g.rules, rule{path: r, kind: kindReadOnly})
	}
	for _, c := range p.Context {
		r, err := realPath(c.Path)
		if err != nil {
			return nil, fmt.Errorf("workspace: context path %s: %w", c.Path, err)
		}
		fi, err := os.Stat(r)
		if err != nil {
			return nil, fmt.Errorf("workspace: context path %s: %w", c.Path, err)
		}
		k := kindContextRead
		if c.Write {
			k = kindContextWrite
		}
		if !fi.IsDir() {
			// Opened from its directory, which itself grants nothing.
			g.rules = append(g.rules, rule{path: r, kind: k, file: true}, rule{path: filepath.Dir(r), kind: kindFileParent})
			continue
		}
		g.rules = append(g.rules, rule{path: r, kind: k, names: c.ProtectedNames})
		for _, pp := range c.Protected {
			dir := strings.HasSuffix(pp, "/")
			if !filepath.IsAbs(pp) {
				pp = filepath.Join(c.Path, pp)
			}
			// A protected path that does not exist yet is protected all
			// the same: by what it would resolve to once made.
			rp := resolveExisting(filepath.Clean(pp))
			if fi, err := os.Lstat(rp); err == nil && fi.IsDir() {
				dir = true
			}
			if !within(rp, r) {
				return nil, fmt.Errorf("workspace: protected path %s is not inside its context path %s; move it under %s or drop it", pp, c.Path, c.Path)
			}
			g.rules = append(g.rules, rule{path: rp, kind: kindProtected, dir: dir})
		}
	}
	for _, w := range p.Writable {
		r, err := realPath(w)
		if err != nil {
			return nil, fmt.Errorf("workspace: writable path %s: %w", w, err)
		}
		fi, err := os.Stat(r)
		if err != nil {
			return nil, fmt.Errorf("workspace: writable path %s: %w", w, err)
		}
		// A file is opened from the directory rule around it, as a
		// protected path is; only its own access differs.
		g.rules = append(g.rules, rule{path: r, kind: kindWorkspace, file: !fi.IsDir()})
	}
	for _, h := range p.Hidden {
		rh, err := realPath(h)
		if err != nil {
			return nil, fmt.Errorf("workspace: hidden path %s: %w", h, err)
		}
		g.rules = append(g.rules, rule{path: rh, kind: kindHidden})
	}
	// Deepest first; at equal depth the stricter rule wins, so a path
	// listed twice gets the lesser access.
	slices.SortStableFunc(g.rules, func(a, b rule) int {
		if d := len(b.path) - len(a.path); d != 0 {
			return d
		}
		return int(b.kind) - int(a.kind)
	})
	return g, nil
}

// MaxBytes is what the workspace may hold.
func (g *Guard) MaxBytes() int64 { return g.maxBytes }

// Usage is the bytes of the regular files in the workspace (links not
// followed).
func (g *Guard) Usage() int64 {
	var n int64
	filepath.WalkDir(g.workspace, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Workspace is the real path of the agent's own directory.
func (g *Guard) Workspace() string { return g.workspace }

// Agent names the agent this guard is for.
func (g *Guard) Agent() string { return g.agent }

// SetFinalPresentation opens (on) or closes the context paths with
// permission write. The run turns it on for the winner only, for the
// final presentation.
//
// Opening it readies the protected names that do not exist yet (the
// kernel must have something to bind read-only); closing it removes those
// and anything protected the presentation's commands or servers made
// (protected.go).
func (g *Guard) SetFinalPresentation(on bool) {
	if on {
		g.openPresentation()
		g.presenter.Store(true)
		return
	}
	g.presenter.Store(false)
	g.closePresentation()
}

// Access is what the agent may do at real (an absolute, symlink-free path)
// now. It decides by the deepest rule containing real.
func (g *Guard) Access(real string) Access { return g.accessAt(real, g.presenter.Load()) }

// accessAt is Access with the write context paths open (final) or not.
func (g *Guard) accessAt(real string, final bool) Access {
	r, ok := g.ruleFor(real, false)
	if !ok {
		return None
	}
	switch r.kind {
	case kindWorkspace:
		return Write
	case kindContextWrite:
		if final && !protectedName(r, real) {
			return Write
		}
		return Read
	case kindReadOnly, kindContextRead, kindProtected:
		return Read
	}
	return None
}

// ruleFor finds the deepest rule containing p (only roots with rootsOnly).
func (g *Guard) ruleFor(p string, rootsOnly bool) (rule, bool) {
	for _, r := range g.rules {
		if rootsOnly && !r.isRoot() {
			continue
		}
		if within(p, r.path) {
			return r, true
		}
	}
	return rule{}, false
}

// Allowed lists what the agent may touch now, for refusal messages.
func (g *Guard) Allowed() string {
	var w, r, n []string
	for _, ru := range slices.Backward(g.rules) {
		switch {
		case ru.kind == kindFileParent:
		case ru.kind == kindHidden:
			n = append(n, ru.path)
		case ru.kind == kindProtected:
			n = append(n, ru.path+" (protected)")
		case g.Access(ru.path) == Write:
			w = append(w, ru.path)
		case ru.kind == kindContextWrite:
			r = append(r, ru.path+" (writable by the winner in the final presentation)")
		default:
			r = append(r, ru.path)
		}
	}
	s := "writable: " + strings.Join(w, ", ")
	if len(r) > 0 {
		s += "; read-only: " + strings.Join(r, ", ")
	}
	if len(n) > 0 {
		s += "; never writable or hidden: " + strings.Join(n, ", ")
	}
	return s
}

// abs makes a path the model gave absolute: relative to the workspace.
func (g *Guard) abs(p string) string {
	if p == "" {
		p = "."
	}
	if strings.HasPrefix(p, "~") {
		// The model's home is its workspace; the user's is none of its business.
		p = "." + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.workspace, p)
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}

// realDir resolves an existing directory to its real absolute path.
func realDir(p, what string) (string, error) {
	r, err := realPath(p)
	if err != nil {
		return "", fmt.Errorf("workspace: %s %s: %w", what, p, err)
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", fmt.Errorf("workspace: %s %s: %w", what, p, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace: %s %s is a file, a directory is expected", what, p)
	}
	return r, nil
}

// resolveExisting resolves the symlinks of the deepest existing ancestor
// of an absolute path and appends the rest: what the path would reach.
// It is for messages and for aliases of allowed roots, never for access.
func resolveExisting(abs string) string {
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// realPath resolves an existing path to its real absolute path.
func realPath(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(a)
}

// Refusal is the error of an operation the policy does not allow.
type Refusal struct {
	Op       string // read, write, delete, list
	Path     string // as asked
	Resolved string // what it resolved to, when known
	Reason   string
	Allowed  string // what the agent may touch now
}

func (r *Refusal) Error() string {
	s := fmt.Sprintf("%s %q refused", r.Op, r.Path)
	if r.Resolved != "" && r.Resolved != r.Path {
		s += fmt.Sprintf(" (it resolves to %s)", r.Resolved)
	}
	s += ": " + r.Reason
	if r.Allowed != "" {
		s += ". You may touch only: " + r.Allowed
	}
	return s
}

func (g *Guard) refuse(op, path, resolved, reason string) error {
	return &Refusal{Op: op, Path: path, Resolved: resolved, Reason: reason, Allowed: g.Allowed()}
}
