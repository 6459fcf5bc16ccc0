package custom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// DefaultTimeout bounds a custom tool call whose config sets no timeout.
const DefaultTimeout = 5 * time.Minute

// PythonSpec is one Python function to offer as a tool.
type PythonSpec struct {
	Name     string // the name offered to the model (see ToolName)
	File     string // absolute path of the .py file
	Function string
	// Description replaces the one from the docstring when set.
	Description string
	// PresetArgs are bound before the call and hidden from the schema.
	PresetArgs map[string]any
	Timeout    time.Duration // 0 = DefaultTimeout
}

// Python is the runner process of a team's Python tools. It starts on
// Load, restarts on the next call if it died (a tool that called exit, a
// crash), and is killed by Close. It is safe for concurrent use.
type Python struct {
	exe string
	dir string // the runner's working directory

	mu     sync.Mutex
	proc   *process
	loaded []map[string]any // every spec loaded so far, to reload after a restart
	closed bool
}

// NewPython makes the runner of python (see FindPython); its tools run
// with dir as their working directory. Nothing starts until Load.
func NewPython(python, dir string) *Python { return &Python{exe: python, dir: dir} }

// Load loads the functions of specs into the runner and returns a tool for
// each, in order. A spec whose file or function cannot be loaded gets an
// Unavailable tool and an error in errs (at its index; nil elsewhere), so
// a run can warn and go on. err is non-nil only when the runner cannot
// run at all; then every tool is Unavailable with that reason.
func (py *Python) Load(ctx context.Context, specs []PythonSpec) (tools []tool.Tool, errs []error, err error) {
	entries := make([]map[string]any, len(specs))
	for i, s := range specs {
		preset := s.PresetArgs
		if preset == nil {
			preset = map[string]any{}
		}
		entries[i] = map[string]any{"file": s.File, "function": s.Function,
			"description": s.Description, "preset_args": preset}
	}
	py.mu.Lock()
	defer py.mu.Unlock()
	if py.closed {
		return nil, nil, errors.New("the Python tool runner is closed")
	}
	// Keys must be unique across Load calls too.
	for i := range entries {
		entries[i]["key"] = fmt.Sprintf("%s#%d", specs[i].Name, len(py.loaded)+i)
	}
	var reply struct {
		Tools []struct {
			Key         string         `json:"key"`
			Description string         `json:"description"`
			Parameters  map[string]any `json:"parameters"`
			Error       string         `json:"error"`
		} `json:"tools"`
	}
	p, err := py.processLocked()
	if err == nil {
		var line json.RawMessage
		if line, err = p.request(ctx, map[string]any{"op": "load", "tools": entries}); err == nil {
			err = json.Unmarshal(line, &reply)
		}
	}
	if err == nil && len(reply.Tools) != len(specs) {
		err = fmt.Errorf("the Python tool runner answered %d tools for %d", len(reply.Tools), len(specs))
	}
	tools, errs = make([]tool.Tool, len(specs)), make([]error, len(specs))
	for i, s := range specs {
		if err != nil {
			tools[i] = Unavailable(s.Name, s.Description, err.Error())
			continue
		}
		r := reply.Tools[i]
		if r.Error != "" {
			errs[i] = fmt.Errorf("custom tool %s: %s", s.Name, r.Error)
			tools[i] = Unavailable(s.Name, s.Description, errs[i].Error())
			continue
		}
		py.loaded = append(py.loaded, entries[i])
		tools[i] = &pythonTool{py: py, key: r.Key, timeout: s.Timeout,
			def: llm.ToolDef{Name: s.Name, Description: r.Description, Parameters: r.Parameters}}
	}
	return tools, errs, err
}

// processLocked returns the running runner, starting it (and reloading
// what was loaded) if it is not running. py.mu is held.
func (py *Python) processLocked() (*process, error) {
	if py.proc != nil && py.proc.alive() {
		return py.proc, nil
	}
	script, err := installRunner()
	if err != nil {
		return nil, err
	}
	p, err := startProcess(py.exe, script, py.dir)
	if err != nil {
		return nil, err
	}
	py.proc = p
	if len(py.loaded) > 0 {
		// A restart: the tools the model was offered must work again.
		if _, err := p.request(context.Background(), map[string]any{"op": "load", "tools": py.loaded}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// call runs one loaded function.
func (py *Python) call(ctx context.Context, key string, args json.RawMessage) (text string, isError bool, err error) {
	py.mu.Lock()
	if py.closed {
		py.mu.Unlock()
		return "", false, errors.New("the Python tool runner is closed")
	}
	p, err := py.processLocked()
	py.mu.Unlock()
	if err != nil {
		return "", false, err
	}
	line, err := p.request(ctx, map[string]any{"op": "call", "key": key, "args": args})
	if err != nil {
		return "", false, err
	}
	var r struct {
		Text  string `json:"text"`
		Error bool   `json:"error"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return "", false, fmt.Errorf("the Python tool runner sent a reply that is not JSON: %w", err)
	}
	return r.Text, r.Error, nil
}

// Close kills the runner (and anything its tools started) and waits for
// it. Calls after Close are error results.
func (py *Python) Close() {
	py.mu.Lock()
	defer py.mu.Unlock()
	py.closed = true
	if py.proc != nil {
		py.proc.stop()
	}
}

// Pid is the runner's process id, 0 when none is running (for tests).
func (py *Python) Pid() int {
	py.mu.Lock()
	defer py.mu.Unlock()
	if py.proc == nil || !py.proc.alive() {
		return 0
	}
	return py.proc.cmd.Process.Pid
}

type pythonTool struct {
	py      *Python
	key     string
	def     llm.ToolDef
	timeout time.Duration
}

func (t *pythonTool) Def() llm.ToolDef { return t.def }

func (t *pythonTool) Call(ctx context.Context, args json.RawMessage) tool.Result {
	timeout := t.timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	text, isErr, err := t.py.call(ctx, t.key, args)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return tool.Errorf("custom tool %s did not finish within %s and was stopped", t.def.Name, timeout)
	case err != nil:
		return tool.Errorf("custom tool %s could not run: %v", t.def.Name, err)
	case isErr:
		return tool.Errorf("custom tool %s failed: %s", t.def.Name, text)
	}
	return tool.Result{Content: text}
}

// Unavailable is a tool that cannot run, offered anyway so that a config
// naming it still runs: each call is an error result giving reason.
func Unavailable(name, description, reason string) tool.Tool {
	if description == "" {
		description = "(unavailable) " + reason
	}
	def := llm.ToolDef{Name: name, Description: description, Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}
	return tool.Func(def, func(context.Context, json.RawMessage) (string, error) {
		return "", errors.New(reason)
	})
}
