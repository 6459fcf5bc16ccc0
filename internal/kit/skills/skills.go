package skills

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/kit/kitfile"
)

// File is the name of a skill's instructions.
const File = "SKILL.md"

// Where a skill was found.
const (
	Project         = "project"
	User            = "user"
	Builtin         = "builtin"
	PreviousSession = "previous_session"
)

// Skill is one discovered skill.
type Skill struct {
	Name        string
	Description string
	Dir         string // its directory (absolute)
	Location    string // Project, User, Builtin or PreviousSession
	Evolving    bool
}

// Sources are the places Discover looks.
type Sources struct {
	Project string   // skills_directory, absolute ("" none)
	User    string   // ~/.agent/skills ("" none)
	Builtin string   // where Install wrote the shipped skills ("" none)
	Only    []string // massgen_skills: the shipped skills to offer (none: all)
	Logs    string   // the log root, for earlier runs' evolving skills ("" none)
}

// maxPrevious bounds the evolving skills taken from earlier runs.
const maxPrevious = 20

// Discover lists the skills of s, deduplicated by name (the first found
// wins: project, user, shipped, then earlier runs', newest first), with a
// warning for each skill it refused.
func Discover(s Sources) ([]Skill, []string) {
	var out []Skill
	var warnings []string
	add := func(sk Skill) {
		if !slices.ContainsFunc(out, func(o Skill) bool { return o.Name == sk.Name }) {
			out = append(out, sk)
		}
	}
	scan := func(dir, loc string) {
		sks, w := scanDir(dir, loc)
		warnings = append(warnings, w...)
		for _, sk := range sks {
			add(sk)
		}
	}
	if s.Project != "" {
		scan(s.Project, Project)
	}
	if s.User != "" && !sameDir(s.User, s.Project) {
		scan(s.User, User)
	}
	if s.Builtin != "" {
		sks, w := scanDir(s.Builtin, Builtin)
		warnings = append(warnings, w...)
		for _, name := range s.Only {
			if !slices.ContainsFunc(sks, func(sk Skill) bool { return sk.Name == name }) {
				warnings = append(warnings, fmt.Sprintf("massgen_skills: massgen ships no skill %q (it ships %s)", name, names(sks)))
			}
		}
		for _, sk := range sks {
			if len(s.Only) == 0 || slices.Contains(s.Only, sk.Name) {
				add(sk)
			}
		}
	}
	if s.Logs != "" {
		for _, sk := range previous(s.Logs) {
			add(sk)
		}
	}
	return out, warnings
}

func names(sks []Skill) string {
	var n []string
	for _, sk := range sks {
		n = append(n, sk.Name)
	}
	return strings.Join(n, ", ")
}

func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, ea := os.Stat(a)
	fb, eb := os.Stat(b)
	return ea == nil && eb == nil && os.SameFile(fa, fb)
}

// scanDir reads the skills directly inside dir: each subdirectory (not a
// link) with a regular SKILL.md.
func scanDir(dir, loc string) ([]Skill, []string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil // absent: no skills there
	}
	var out []Skill
	var warnings []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			if _, err := os.Stat(filepath.Join(p, File)); err == nil {
				warnings = append(warnings, fmt.Sprintf("skill %s is a symbolic link: not offered (copy the skill into %s instead)", p, dir))
			}
			continue
		case !e.IsDir():
			continue
		}
		sk, err := read(dir, e.Name(), loc)
		if err != nil {
			if !os.IsNotExist(err) {
				warnings = append(warnings, fmt.Sprintf("skill %s: %v: not offered", p, err))
			}
			continue
		}
		out = append(out, sk)
	}
	return out, warnings
}

// read reads the SKILL.md of dir/name without following a link.
func read(dir, name, loc string) (Skill, error) {
	b, err := kitfile.Read(dir, name+"/"+File)
	if err != nil {
		return Skill{}, err
	}
	meta, _ := kitfile.FrontMatter(b)
	evolving, _ := meta["evolving"].(bool)
	return Skill{Name: cmp.Or(kitfile.String(meta, "name"), name), Description: kitfile.String(meta, "description"),
		Dir: filepath.Join(dir, name), Location: loc, Evolving: evolving || loc == PreviousSession}, nil
}

// previous finds the evolving skills earlier runs' winners wrote
// (final/<agent>/workspace/tasks/evolving_skill/SKILL.md in each run's and
// each session turn's log directory), newest run first.
func previous(logs string) []Skill {
	var runs []string
	for _, pattern := range []string{"log_*", filepath.Join("log_*", "turn_*")} {
		m, _ := filepath.Glob(filepath.Join(logs, pattern))
		runs = append(runs, m...)
	}
	// log_<timestamp>[/turn_N]: newest first by name.
	slices.SortFunc(runs, func(a, b string) int { return strings.Compare(b, a) })
	var out []Skill
	for _, run := range runs {
		agents, _ := os.ReadDir(filepath.Join(run, "final"))
		for _, a := range agents {
			if !a.IsDir() {
				continue
			}
			dir := filepath.Join(run, "final", a.Name(), "workspace", "tasks")
			sk, err := read(dir, "evolving_skill", PreviousSession)
			if err != nil {
				continue
			}
			if sk.Name == "evolving_skill" {
				sk.Name = "session-" + filepath.Base(run)
			}
			out = append(out, sk)
			if len(out) == maxPrevious {
				return out
			}
		}
	}
	return out
}
