package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/coord"
)

// CustomTool is one tool of a backend's `custom_tools:`. Upstream lets one
// entry name several functions (with a name, description and preset_args
// each, or one shared); the decoder splits such an entry into one
// CustomTool per function.
type CustomTool struct {
	Type     string // "python" (the default) or "command"
	Name     string // as configured (the function's name when absent); see ToolName
	Category string
	// Description replaces the one a Python tool's docstring gives.
	Description string
	Line        int
	// Python tools.
	Path       string // as written: relative to the config's directory or the working directory; "" = search upstream's layout
	Function   string
	PresetArgs map[string]any
	// Command tools.
	Command    []string          // the executable and its leading arguments
	Args       []string          // more arguments
	Env        map[string]string // over massgen's environment
	Cwd        string            // relative to the config's directory
	Parameters map[string]any    // JSON Schema of the arguments
	// TimeoutSeconds bounds a call (0 = the default).
	TimeoutSeconds float64
}

var (
	customToolKeys     = []string{"type", "name", "category", "description", "path", "function", "preset_args", "timeout"}
	commandToolKeys    = []string{"type", "name", "category", "description", "command", "args", "env", "cwd", "parameters", "timeout"}
	customToolNameRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
)

// customTools reads `custom_tools:`, a list of entries.
func (d *decoder) customTools(p *pair, key string) []CustomTool {
	var out []CustomTool
	for ikey, it := range d.mapItems(p, key, "a list of tools", "a map with name, path and function (or type: command)") {
		var tools []CustomTool
		if typ, _ := d.str(join(ikey, "type"), it.get("type")); typ == "command" {
			tools = d.commandTool(it, ikey)
		} else {
			if typ != "" && typ != "python" {
				d.fail(it.get("type").val.pos, join(ikey, "type"), fmt.Sprintf("invalid custom tool type '%s'", typ), oneOf(typ, []string{"python", "command"}))
				continue
			}
			tools = d.pythonTools(it, ikey)
		}
		for _, t := range tools {
			d.checkCustomToolName(t, out, ikey, it.pos)
			out = append(out, t)
		}
	}
	return out
}

func (d *decoder) checkCustomToolName(t CustomTool, earlier []CustomTool, key string, at pos) {
	switch {
	case !customToolNameRule().MatchString(t.ToolName()):
		d.fail(at, join(key, "name"), fmt.Sprintf("invalid custom tool name '%s'", t.Name),
			"use letters, digits, '_' and '-' only, at most 64 characters with the custom_tool__ prefix, as the providers require")
	case t.Category == "builtin" && slices.Contains([]string{coord.ToolNewAnswer, coord.ToolVote, coord.ToolSubmit, coord.ToolRestart}, t.Name):
		d.fail(at, join(key, "name"), fmt.Sprintf("custom tool '%s' would take the name of a workflow tool", t.Name),
			"rename it, or drop category: builtin so it is offered as custom_tool__"+t.Name)
	case slices.ContainsFunc(earlier, func(e CustomTool) bool { return e.Name == t.Name }):
		d.fail(at, join(key, "name"), fmt.Sprintf("two custom tools are named '%s'", t.Name), "give each tool its own name")
	}
}

// pythonTools reads an upstream entry: function (a name or a list), and
// name, description and preset_args each shared or one per function.
func (d *decoder) pythonTools(n *node, key string) []CustomTool {
	for _, e := range n.pairs {
		switch {
		case e.key == "default_params":
			// In upstream's computer-use examples, but upstream reads it nowhere.
			d.ignore(e.keyPos, join(key, e.key), e.key, "'default_params' is ignored (upstream MassGen does not read it either)",
				"use preset_args to bind arguments before the model sees the tool")
		case e.key == "defer_loading":
			d.upstreamValue(e, join(key, e.key), deferLoading)
		case !slices.Contains(customToolKeys, e.key):
			d.unknown(e, key, customToolKeys)
		}
	}
	fp := n.get("function")
	var funcs []string
	switch {
	case fp == nil || fp.val.isNull():
		d.fail(n.pos, join(key, "function"), "a custom tool needs 'function': the Python function to call",
			"add function: NAME (or type: command for an executable)")
		return nil
	case fp.val.kind == kindString:
		funcs = []string{fp.val.s}
	default:
		var ok bool
		if funcs, ok = d.stringList(join(key, "function"), fp); !ok || len(funcs) == 0 {
			if ok {
				d.fail(fp.val.pos, join(key, "function"), "'function' is an empty list", "name at least one function")
			}
			return nil
		}
	}
	names, ok1 := perFunction(d, n, key, "name", len(funcs), "a string", func(it *node) (any, bool) { return it.s, it.kind == kindString })
	descs, ok2 := perFunction(d, n, key, "description", len(funcs), "a string", func(it *node) (any, bool) { return it.s, it.kind == kindString })
	presets, ok3 := perFunction(d, n, key, "preset_args", len(funcs), "a map of argument to value", func(it *node) (any, bool) {
		m, ok := plain(it).(map[string]any)
		return m, ok
	})
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	base := CustomTool{Type: "python", Line: n.pos.line}
	base.Path, _ = d.str(join(key, "path"), n.get("path"))
	base.Category, _ = d.str(join(key, "category"), n.get("category"))
	base.TimeoutSeconds = d.toolTimeout(n, key)
	out := make([]CustomTool, len(funcs))
	for i, f := range funcs {
		t := base
		t.Function = f
		t.Name, _ = names[i].(string)
		if t.Name == "" {
			t.Name = f
		}
		t.Description, _ = descs[i].(string)
		t.PresetArgs, _ = presets[i].(map[string]any)
		out[i] = t
	}
	return out
}

// perFunction reads a field that is one value shared by every function or
// a list with one per function (upstream's rule); a list of another length
// is an error.
func perFunction(d *decoder, n *node, key, field string, count int, want string, one func(*node) (any, bool)) ([]any, bool) {
	out := make([]any, count)
	p := n.get(field)
	if p == nil || p.val.isNull() {
		return out, true
	}
	fkey := join(key, field)
	d.cfg.loc[fkey] = p.val.pos
	items := []*node{p.val}
	if p.val.kind == kindSeq {
		if len(p.val.items) != count {
			d.fail(p.val.pos, fkey, fmt.Sprintf("'%s' lists %d values for %d functions", field, len(p.val.items), count),
				fmt.Sprintf("give one value shared by all, or exactly %d", count))
			return nil, false
		}
		items = p.val.items
	}
	for i := range out {
		it := items[min(i, len(items)-1)]
		v, ok := one(it)
		if !ok {
			d.typeError(fkey, it, want)
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// commandTool reads a `type: command` entry.
func (d *decoder) commandTool(n *node, key string) []CustomTool {
	for _, e := range n.pairs {
		if !slices.Contains(commandToolKeys, e.key) {
			d.unknown(e, key, commandToolKeys)
		}
	}
	t := CustomTool{Type: "command", Line: n.pos.line}
	t.Name, _ = d.str(join(key, "name"), n.get("name"))
	if t.Name == "" {
		d.fail(n.pos, join(key, "name"), "a command tool needs 'name'", "add name: NAME")
		return nil
	}
	t.Category, _ = d.str(join(key, "category"), n.get("category"))
	t.Description, _ = d.str(join(key, "description"), n.get("description"))
	switch cp := n.get("command"); {
	case cp == nil || cp.val.isNull():
		d.fail(n.pos, join(key, "command"), "a command tool needs 'command': the executable to run", "add command: PATH (or a list: [program, arg, ...])")
		return nil
	case cp.val.kind == kindString:
		t.Command = []string{cp.val.s}
	default:
		if t.Command, _ = d.stringList(join(key, "command"), cp); len(t.Command) == 0 {
			return nil
		}
	}
	t.Args, _ = d.stringList(join(key, "args"), n.get("args"))
	if m, ok := d.mapping(join(key, "env"), n.get("env"), "a map of variable to value"); ok {
		t.Env = map[string]string{}
		for _, e := range m.pairs {
			if s, ok := d.str(join(join(key, "env"), e.key), e); ok {
				t.Env[e.key] = s
			}
		}
	}
	t.Cwd, _ = d.str(join(key, "cwd"), n.get("cwd"))
	if m, ok := d.mapping(join(key, "parameters"), n.get("parameters"), "a JSON Schema (a map)"); ok {
		t.Parameters, _ = plain(m).(map[string]any)
	}
	t.TimeoutSeconds = d.toolTimeout(n, key)
	return []CustomTool{t}
}

func (d *decoder) toolTimeout(n *node, key string) float64 {
	v, _ := d.seconds(join(key, "timeout"), n.get("timeout"), "300")
	return v
}

// CustomToolPrefix is what upstream MassGen puts before a custom tool's
// name, so that prompts and filters written for it keep working.
const CustomToolPrefix = "custom_tool__"

// ToolName is the name the tool is offered under: custom_tool__<name>,
// unless the name has the prefix already or the tool's category is
// "builtin" (upstream's rule).
func (t CustomTool) ToolName() string {
	if t.Category == "builtin" || strings.HasPrefix(t.Name, CustomToolPrefix) {
		return t.Name
	}
	return CustomToolPrefix + t.Name
}
