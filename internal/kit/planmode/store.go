package planmode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/kit/kitfile"
)

// Kind is what a planning run produces.
type Kind string

// The two kinds: a task plan (--plan) or a requirements spec (--spec).
const (
	PlanKind Kind = "plan"
	SpecKind Kind = "spec"
)

func (k Kind) items() string {
	if k == SpecKind {
		return "requirements"
	}
	return "tasks"
}

func (k Kind) file() string { return string(k) + ".json" }

// candidates are where an agent writes the artifact in its workspace, in
// the order they are looked for.
func (k Kind) candidates() []string {
	if k == SpecKind {
		return []string{"project_spec.json", "deliverable/project_spec.json", "spec.json"}
	}
	return []string{"project_plan.json", "deliverable/project_plan.json", "plan.json"}
}

// The statuses of a stored plan.
const (
	Ready     = "ready"
	Executing = "executing"
	Completed = "completed"
	Failed    = "failed"
)

// Metadata is plan_metadata.json.
type Metadata struct {
	PlanID          string `json:"plan_id"`
	CreatedAt       string `json:"created_at"`
	ArtifactType    Kind   `json:"artifact_type"`
	Status          string `json:"status"`
	Question        string `json:"question"`
	PlanningLogDir  string `json:"planning_log_dir,omitempty"`
	ExecutionLogDir string `json:"execution_log_dir,omitempty"`
	Items           int    `json:"items"`
}

// Session is one stored plan: .massgen/plans/plan_<id>/ with
// plan_metadata.json and frozen/plan.json (or spec.json).
type Session struct {
	Dir  string
	Meta Metadata
}

// item is a task or requirement of an artifact, as far as the rules
// need it.
type item struct {
	ID        string `json:"id"`
	DependsOn []any  `json:"depends_on"`
	raw       map[string]any
}

// parse checks an artifact: a JSON object whose tasks (requirements)
// are objects with distinct ids, dependencies on known ones and no cycle;
// it returns them with each item after those it depends on.
func parse(data []byte, k Kind) ([]map[string]any, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	var raws []map[string]any
	if err := json.Unmarshal(doc[k.items()], &raws); err != nil || len(raws) == 0 {
		return nil, fmt.Errorf("no %q list of objects in it", k.items())
	}
	items := make([]item, len(raws))
	index := map[string]int{}
	for i, r := range raws {
		id, _ := r["id"].(string)
		if strings.TrimSpace(id) == "" {
			return nil, fmt.Errorf("%s %d has no id", k.items(), i+1)
		}
		if _, dup := index[id]; dup {
			return nil, fmt.Errorf("two %s have the id %s", k.items(), id)
		}
		index[id] = i
		if d, _ := r["description"].(string); k == PlanKind && strings.TrimSpace(d) == "" {
			return nil, fmt.Errorf("task %s has no description", id)
		}
		deps, _ := r["depends_on"].([]any)
		items[i] = item{ID: id, DependsOn: deps, raw: r}
	}
	for _, it := range items {
		for _, d := range it.DependsOn {
			s, ok := d.(string)
			if _, known := index[s]; !ok || !known {
				return nil, fmt.Errorf("%s depends on %v, which is not in it", it.ID, d)
			}
		}
	}
	// A stable topological order, so that each item comes after its
	// dependencies (the task plan takes them that way); a cycle fails.
	var out []map[string]any
	state := map[string]int{}
	var visit func(i int, path []string) error
	visit = func(i int, path []string) error {
		id := items[i].ID
		switch state[id] {
		case 1:
			return fmt.Errorf("dependency cycle: %s -> %s", strings.Join(path, " -> "), id)
		case 2:
			return nil
		}
		state[id] = 1
		for _, d := range items[i].DependsOn {
			if err := visit(index[d.(string)], append(path, id)); err != nil {
				return err
			}
		}
		state[id] = 2
		out = append(out, items[i].raw)
		return nil
	}
	for i := range items {
		if err := visit(i, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Freeze takes the artifact the winner wrote in its workspace ws and
// stores it under root (.massgen/plans) as a new session, ready to execute.
func Freeze(root, ws string, k Kind, question, logDir string, now time.Time) (*Session, error) {
	var data []byte
	var found string
	for _, c := range k.candidates() {
		b, err := kitfile.Read(ws, c)
		if err == nil {
			data, found = b, c
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s in the winner's workspace: %w", c, err)
		}
	}
	if found == "" {
		return nil, fmt.Errorf("the winner wrote no %s in its workspace (%s): the planning run did not produce a %s",
			strings.Join(k.candidates(), ", "), ws, k)
	}
	items, err := parse(data, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", found, err)
	}
	id := now.Format("20060102_150405") + fmt.Sprintf("_%06d", now.Nanosecond()/1000)
	s := &Session{Dir: filepath.Join(root, "plan_"+id), Meta: Metadata{PlanID: id, CreatedAt: now.Format(time.RFC3339),
		ArtifactType: k, Status: Ready, Question: question, PlanningLogDir: logDir, Items: len(items)}}
	if err := os.MkdirAll(filepath.Join(s.Dir, "frozen"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "frozen", k.file()), data, 0o644); err != nil {
		return nil, err
	}
	return s, s.save()
}

func (s *Session) save() error {
	data, err := json.MarshalIndent(s.Meta, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.Dir, "plan_metadata.json"), data, 0o644)
}

// SetStatus records the session's status, and the log directory of the
// execution run when there is one.
func (s *Session) SetStatus(status, logDir string) error {
	s.Meta.Status = status
	if logDir != "" {
		s.Meta.ExecutionLogDir = logDir
	}
	return s.save()
}

// Resolve finds a stored session by --execute-plan's argument: a
// directory, a plan id (plan_<id> under root) or latest.
func Resolve(root, ref string) (*Session, error) {
	dir := ref
	switch {
	case ref == "latest":
		entries, err := os.ReadDir(root)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "plan_") {
				names = append(names, e.Name())
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("no stored plan in %s: make one with --plan or --spec", root)
		}
		sort.Strings(names) // plan_<timestamp>: the last is the latest
		dir = filepath.Join(root, names[len(names)-1])
	case !strings.ContainsRune(ref, filepath.Separator):
		if fi, err := os.Stat(ref); err != nil || !fi.IsDir() {
			dir = filepath.Join(root, "plan_"+strings.TrimPrefix(ref, "plan_"))
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "plan_metadata.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a stored plan (no plan_metadata.json): %w", ref, err)
	}
	s := &Session{Dir: dir}
	if err := json.Unmarshal(data, &s.Meta); err != nil {
		return nil, fmt.Errorf("%s: plan_metadata.json: %v", dir, err)
	}
	if !slices.Contains([]Kind{PlanKind, SpecKind}, s.Meta.ArtifactType) {
		return nil, fmt.Errorf("%s: artifact_type %q is neither plan nor spec", dir, s.Meta.ArtifactType)
	}
	return s, nil
}

// Execution is what an execution run of s gets: its question (the
// execution instructions, then question, or the planning run's when
// empty) and the files to lay in each agent's workspace — the frozen
// artifact as tasks/plan.json (a spec's requirements as tasks, the spec
// itself as tasks/spec.json).
func (s *Session) Execution(question string) (string, map[string][]byte, error) {
	k := s.Meta.ArtifactType
	data, err := os.ReadFile(filepath.Join(s.Dir, "frozen", k.file()))
	if err != nil {
		return "", nil, fmt.Errorf("the frozen %s of %s: %w", k, s.Dir, err)
	}
	items, err := parse(data, k)
	if err != nil {
		return "", nil, fmt.Errorf("the frozen %s of %s: %v", k, s.Dir, err)
	}
	if strings.TrimSpace(question) == "" {
		question = s.Meta.Question
	}
	files := map[string][]byte{}
	if k == SpecKind {
		files["tasks/spec.json"] = data
	}
	tasks := make([]map[string]any, len(items))
	for i, r := range items {
		tasks[i] = asTask(r, k)
	}
	plan, err := json.MarshalIndent(map[string]any{"tasks": tasks}, "", "  ")
	if err != nil {
		return "", nil, err
	}
	files["tasks/plan.json"] = plan
	return executionPrompt(k, len(items), question), files, nil
}

func executionPrompt(k Kind, n int, question string) string {
	what, verb := "task plan", "Execute every task"
	if k == SpecKind {
		what, verb = "requirements spec (tasks/spec.json; each requirement is also a task of tasks/plan.json)", "Implement every requirement"
	}
	return fmt.Sprintf(`# %s EXECUTION MODE

The %s has been AUTO-LOADED into `+"`tasks/plan.json`"+`: it is your task plan (%d items). Start implementing!

## Getting Started

1. **Review the plan**: call `+"`get_task_plan`"+` (or read `+"`tasks/plan.json`"+`); `+"`get_ready_tasks`"+` shows what can start now
2. **%s** in dependency order, as each one's description and verification say
3. **Track progress**: `+"`update_task_status(task_id, status, completion_notes)`"+` as you work: in_progress, completed, then verified
4. **Do not re-plan**: add a task with `+"`add_task`"+` only for work the plan missed

## Your Task
%s`, strings.ToUpper(string(k)), what, n, verb, question)
}

// asTask is an item of an artifact as a task of the agent's plan, with
// the fields the task plan takes (a spec's requirement: its title and
// EARS statement as the description, P0/P1/P2 as high/medium/low).
func asTask(r map[string]any, k Kind) map[string]any {
	str := func(m map[string]any, key string) string { s, _ := m[key].(string); return s }
	md, _ := r["metadata"].(map[string]any)
	t := map[string]any{"id": r["id"], "description": str(r, "description")}
	if deps, ok := r["depends_on"].([]any); ok {
		t["depends_on"] = deps
	}
	prio := str(r, "priority")
	if k == SpecKind {
		t["description"] = strings.TrimSpace(strings.Trim(str(r, "title")+": "+str(r, "ears"), ": "))
		prio = map[string]string{"P0": "high", "P1": "medium", "P2": "low"}[prio]
	}
	if slices.Contains([]string{"low", "medium", "high"}, prio) {
		t["priority"] = prio
	}
	for _, key := range []string{"verification", "verification_method"} {
		if v := cmpOr(str(r, key), str(md, key)); v != "" {
			t[key] = v
		}
	}
	keep := map[string]any{}
	for _, key := range []string{"chunk", "task_type", "type", "verification_group", "success_criteria", "rationale"} {
		if v, ok := r[key]; ok {
			keep[key] = v
		} else if v, ok := md[key]; ok {
			keep[key] = v
		}
	}
	if len(keep) > 0 {
		t["metadata"] = keep
	}
	return t
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
