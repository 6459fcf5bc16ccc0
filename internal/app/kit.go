package app

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/kit/memory"
	"github.com/massgen/massgen/internal/kit/skills"
	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/store"
	"github.com/massgen/massgen/internal/workspace"
)

// runKit is what a run's agents with a workspace get of v0.1.73's working
// kit: filesystem memory (internal/kit/memory) and skills
// (internal/kit/skills). nil when the config asks for neither.
type runKit struct {
	memory  bool
	mode    memory.Mode
	skills  []skills.Skill
	project string   // skills_directory (absolute): a write context path
	dirs    []string // the other skills' directories: read-only
}

// newRunKit discovers the run's skills and decides its memory mode.
func newRunKit(cfg *config.Config, workDir string) (*runKit, []string, error) {
	k := cfg.Orchestrator.Kit
	if !k.Memory && !k.UseSkills {
		return nil, nil, nil
	}
	rk := &runKit{memory: k.Memory}
	if k.Memory {
		p := cfg.UI.EnableFinalPresentation
		presents := p != nil && *p || p == nil && len(cfg.Agents) > 1
		rk.mode = memory.Capture(k.LearningCapture, presents, k.NoCaptureFallback)
	}
	if !k.UseSkills {
		return rk, nil, nil
	}
	src := skills.Sources{Project: absUnder(workDir, cmp.Or(k.SkillsDirectory, filepath.Join(".agent", "skills"))), Only: k.MassgenSkills}
	// The project's directory is where the winner saves skills: made when
	// missing, so the final presentation has somewhere to write.
	if err := os.MkdirAll(src.Project, 0o755); err != nil {
		return nil, nil, execErr("cannot create the skills directory %s: %w", src.Project, err)
	}
	if home, err := os.UserHomeDir(); err == nil {
		src.User = filepath.Join(home, ".agent", "skills")
	}
	dir, err := skills.Install(filepath.Join(workDir, ".massgen", "skills"))
	if err != nil {
		return nil, nil, execErr("cannot write massgen's skills: %w", err)
	}
	src.Builtin = dir
	if k.PreviousSkills {
		src.Logs = filepath.Join(workDir, ".massgen", "massgen_logs")
	}
	sks, warnings := skills.Discover(src)
	rk.skills, rk.project = sks, src.Project
	seen := map[string]bool{src.Project: true}
	for _, sk := range sks {
		d := sk.Dir
		if sk.Location != skills.PreviousSession {
			d = filepath.Dir(d) // the directory of skills it came from
		}
		if !seen[d] {
			seen[d] = true
			rk.dirs = append(rk.dirs, d)
		}
	}
	return rk, warnings, nil
}

func absUnder(workDir, p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(workDir, p)
	}
	return filepath.Clean(p)
}

// kitPolicy is what an agent's Guard adds for the kit.
type kitPolicy struct {
	context  []workspace.ContextPath // the guard's only (memory closed for the rounds)
	shared   []workspace.ContextPath // context paths like the user's (the project's skills)
	readOnly []string
	writable []string
}

// policy lays the kit out in the workspace ws (memory's directories) and
// says what its Guard adds: memory as the capture mode wants it, the
// skills directories read-only, the project's writable by the winner in
// the final presentation (with .git, .env* and .massgen protected).
func (k *runKit) policy(ws string) (kitPolicy, error) {
	var p kitPolicy
	if k == nil {
		return p, nil
	}
	if k.memory {
		mp, err := memory.Prepare(ws, k.mode)
		if err != nil {
			return p, err
		}
		p.context, p.writable = mp.Context, mp.Writable
	}
	if k.project != "" {
		p.shared = []workspace.ContextPath{{Path: k.project, Write: true, ProtectedNames: protectedNames}}
		p.readOnly = k.dirs
	}
	return p, nil
}

// withKit carries the memories of the session's previous turn (its log
// directory, "" none) into each workspace and adds the kit's prompt
// sections to the agents with one. agents is left as it is.
func (rw *runWorkspaces) withKit(agents []orchestrator.Agent, previous string) ([]orchestrator.Agent, error) {
	k := rw.kit
	if k == nil {
		return agents, nil
	}
	from := ""
	if k.memory {
		from = memory.FromLog(previous)
	}
	out := make([]orchestrator.Agent, len(agents))
	copy(out, agents)
	for i := range out {
		ws := rw.dirs[out[i].ID]
		if ws == "" {
			continue
		}
		var b strings.Builder
		if k.memory {
			if _, err := memory.Carry(ws, from); err != nil {
				return nil, execErr("agent %s: carrying the previous turn's memories: %v", out[i].ID, err)
			}
			b.WriteString(memory.Section(ws, k.mode, rw.snaps.viewDir(out[i].ID)))
		}
		b.WriteString(skills.Section(k.skills, k.project, k.project != ""))
		out[i].SystemMessage = strings.TrimSpace(out[i].SystemMessage + b.String())
	}
	return out, nil
}

// mergeMemory merges the other agents' memories into the winner's
// workspace (before it is copied to the logs, whence the next turn
// carries it).
func (rw *runWorkspaces) mergeMemory(winner string) error {
	if rw.kit == nil || !rw.kit.memory || rw.dirs[winner] == "" {
		return nil
	}
	others := map[string]string{}
	for id, ws := range rw.dirs {
		if id != winner {
			others[id] = ws
		}
	}
	_, err := memory.Merge(rw.dirs[winner], others)
	return err
}

// previousTurnLog is the log directory of the session's last completed
// turn ("" none): its winner's memories start the next turn.
func (s *Session) previousTurnLog(ctx context.Context) string {
	if s.info.ID == "" {
		return ""
	}
	turns, err := s.st.Turns(ctx, s.info.ID)
	if err != nil {
		return ""
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Status == store.TurnCompleted && turns[i].LogDir != "" {
			return turns[i].LogDir
		}
	}
	return ""
}

// kitWarnings says which agents get no memory or skills for want of a
// workspace.
func kitWarnings(cfg *config.Config) []string {
	k := cfg.Orchestrator.Kit
	if !k.Memory && !k.UseSkills {
		return nil
	}
	var out []string
	for _, a := range cfg.Agents {
		if a.Backend.Cwd == "" {
			out = append(out, fmt.Sprintf("agent %s has no workspace (cwd), so it gets no filesystem memory or skills", a.ID))
		}
	}
	return out
}
