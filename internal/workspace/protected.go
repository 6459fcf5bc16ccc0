package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Protected names and paths of a write context path hold whether or not
// they exist. The file tools decide by name (accessAt). Commands and MCP
// servers see the kernel's mounts, and the kernel can bind read-only only
// what exists; so, while the final presentation is open:
//   - every protected entry that exists is bound read-only (nested
//     repositories' .git included, found by one walk as it opens);
//   - a fixed protected name or path that does not exist (.git, .massgen,
//     .env, a protected_paths entry) gets an empty placeholder, made by
//     massgen and bound read-only, so nothing can be made in its place;
//     the placeholders go when the presentation closes;
//   - what no placeholder can stand for (.env.local, a .git in a
//     directory made during the presentation) is looked for after each
//     command and when the presentation closes, removed, and reported
//     (Reverted), so it never outlives the command that made it.

// protectedName reports whether real, under the write context path r, has
// a protected name at some depth.
func protectedName(r rule, real string) bool {
	if len(r.names) == 0 || r.file || real == r.path {
		return false
	}
	rel := strings.TrimPrefix(real, r.path+string(filepath.Separator))
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if nameMatches(r.names, c) {
			return true
		}
	}
	return false
}

func nameMatches(names []string, c string) bool {
	return slices.ContainsFunc(names, func(n string) bool {
		ok, _ := path.Match(n, c)
		return ok
	})
}

// presentation is what the guard set up when the presentation opened.
type presentation struct {
	existing     map[string]bool // protected entries there at the start
	placeholders map[string]fileID
	reverted     []string // protected entries made and removed since
}

// fixedProtected are the protected entries a placeholder can stand for:
// the literal protected names at the top of each write context path and
// every protected path, with whether each is a directory.
func (g *Guard) fixedProtected() map[string]bool {
	out := map[string]bool{}
	for _, r := range g.rules {
		switch {
		case r.kind == kindProtected:
			out[r.path] = r.dir
		case r.kind == kindContextWrite && !r.file:
			for _, n := range r.names {
				if !strings.ContainsAny(n, "*?[\\") {
					out[filepath.Join(r.path, n)] = n != ".env" // .git and .massgen are directories
				}
			}
		}
	}
	return out
}

// writeRoot is the write context path rule whose access governs p, if any:
// p is under it and under no deeper rule (a workspace, a hidden place).
func (g *Guard) writeRoot(p string) (rule, bool) {
	r, ok := g.ruleFor(p, false)
	if ok && r.kind == kindProtected {
		// A protected path's own rule: the context path above it.
		r, ok = g.ruleFor(filepath.Dir(r.path), false)
	}
	return r, ok && r.kind == kindContextWrite && !r.file
}

// protectedEntries walks the write context paths (never following a link,
// not descending into deeper rules) for the protected entries there now.
func (g *Guard) protectedEntries() []string {
	fixed := g.fixedProtected()
	var out []string
	for _, root := range g.rules {
		if root.kind != kindContextWrite || root.file {
			continue
		}
		filepath.WalkDir(root.path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root.path {
				return nil
			}
			if r, ok := g.writeRoot(p); !ok || r.path != root.path {
				if _, isFixed := fixed[p]; !isFixed {
					if d.IsDir() {
						return fs.SkipDir // another rule's place
					}
					return nil
				}
			}
			if _, isFixed := fixed[p]; isFixed || nameMatches(root.names, d.Name()) {
				out = append(out, p)
				if d.IsDir() {
					return fs.SkipDir
				}
			}
			return nil
		})
	}
	return out
}

// openPresentation records the protected entries there are and makes the
// placeholders of the fixed ones that are missing.
func (g *Guard) openPresentation() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pres = presentation{existing: map[string]bool{}, placeholders: map[string]fileID{}}
	for _, p := range g.protectedEntries() {
		g.pres.existing[p] = true
	}
	for p, dir := range g.fixedProtected() {
		if g.pres.existing[p] {
			continue
		}
		if _, ok := g.writeRoot(filepath.Dir(p)); !ok {
			continue // its directory is not one the presentation writes
		}
		var err error
		if dir {
			err = os.Mkdir(p, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
		if err != nil {
			continue // its parent is missing: then the name is refused by the walk after
		}
		if id, ok := lstatID(p); ok {
			g.pres.placeholders[p] = id
		}
	}
}

// closePresentation removes what the presentation made protected, then
// the placeholders that are still empty and massgen's.
func (g *Guard) closePresentation() {
	g.revert()
	g.mu.Lock()
	defer g.mu.Unlock()
	for p, id := range g.pres.placeholders {
		if cur, ok := lstatID(p); ok && cur == id {
			os.Remove(p) // a directory only if empty: what is in it was reverted
		}
	}
	g.pres.placeholders = nil
}

// RevertProtected removes the protected entries of the write context paths
// that were made since the presentation opened and returns them; a
// command runner calls it after each command of the presentation.
func (g *Guard) RevertProtected() []string {
	if !g.presenter.Load() {
		return nil
	}
	return g.revert()
}

func (g *Guard) revert() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pres.existing == nil {
		return nil
	}
	var gone []string
	for _, p := range g.protectedEntries() {
		if g.pres.existing[p] {
			continue
		}
		if id, ok := g.pres.placeholders[p]; ok {
			if cur, ok := lstatID(p); ok && cur == id && emptyDir(p) {
				continue
			}
			// A placeholder replaced or filled (it is read-only in the
			// sandbox, so only another path did it): it goes as well.
			delete(g.pres.placeholders, p)
		}
		if err := os.RemoveAll(p); err == nil || errors.Is(err, fs.ErrNotExist) {
			gone = append(gone, p)
		}
	}
	g.pres.reverted = append(g.pres.reverted, gone...)
	return gone
}

// Reverted lists the protected entries removed since the presentation
// opened, for the change report.
func (g *Guard) Reverted() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.pres.reverted)
}

// protectedMounts are the read-only binds of the protected entries there
// are now, for a command or server of the presentation.
func (g *Guard) protectedMounts() []Mount {
	var out []Mount
	for _, p := range g.protectedEntries() {
		out = append(out, Mount{Path: p, Access: Read})
	}
	return out
}

func emptyDir(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		return fi.Size() == 0
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}
