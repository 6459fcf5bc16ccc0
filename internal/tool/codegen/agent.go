package codegen

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/mcp"
)

// ErrNotGiven is a call to a tool the agent was not given (another
// agent's server, a tool its filters leave out, one that does not exist).
var ErrNotGiven = errors.New("not one of this agent's tools")

// Options are one agent's code-based tools.
type Options struct {
	// ID is the agent's.
	ID string
	// Source is the agent's MCP tools, after its filters.
	Source tool.Source
	// Direct are the servers that stay function-calling tools
	// (direct_mcp_servers).
	Direct []string
	// Wrap is what each call through the hub passes, as a call through
	// function calling would: the agent's guard on path arguments, the
	// whole of a long result kept in the workspace.
	Wrap func(tool.Tool) tool.Tool
	// Out is where the tree is written: the agent's workspace, through
	// its guard; Root is that directory, where the tree is looked for (it
	// is written again when the tools change or .mcp/client.py is gone).
	// With Shared, neither is used.
	Out  Writer
	Root string
	// Shared is the shared tools directory with the hash of this
	// configuration (SharedDir), or "": the tree is written there once, by
	// the first agent that needs it, and never rewritten while its servers/
	// and .mcp/ exist (upstream's rule); agents read it through PYTHONPATH.
	Shared string
	// Warn hears what went wrong writing the tree (the agent goes on: its
	// direct tools do not depend on it).
	Warn func(string)
	// Custom is the custom tools tree (CustomTree), written with the
	// wrappers the first time (the agent may change it afterwards).
	Custom map[string]string
}

// Agent is one agent's code-based tools: the function-calling tools it
// keeps (Direct) and the calls its wrappers make through the Hub (Call).
type Agent struct {
	o Options

	mu      sync.Mutex
	written [32]byte // the hash of the files last written
	first   bool     // custom_tools/__init__.py written (once: the agent may change it)
}

// NewAgent builds an agent's code-based tools.
func NewAgent(o Options) *Agent {
	if o.Wrap == nil {
		o.Wrap = func(t tool.Tool) tool.Tool { return t }
	}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	return &Agent{o: o}
}

// SetOutput sets Options.Out and Options.Wrap once they exist (the
// agent's guard is made after its code-based tools).
func (a *Agent) SetOutput(out Writer, wrap func(tool.Tool) tool.Tool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.o.Out = out
	if wrap != nil {
		a.o.Wrap = wrap
	}
}

// Direct is the agent's MCP tool source as function calling sees it:
// the tools of direct_mcp_servers only (and of a server no wrapper could
// be written for). Resolving it writes the wrappers of the others.
func (a *Agent) Direct() tool.Source { return directSource{a} }

type directSource struct{ a *Agent }

func (d directSource) Tools(ctx context.Context) ([]tool.Tool, error) {
	ts, err := d.a.o.Source.Tools(ctx)
	if err != nil {
		return nil, err
	}
	coded := d.a.write(ts)
	var out []tool.Tool
	for _, t := range ts {
		server, _, ok := mcp.Origin(t)
		if !ok || !slices.Contains(coded, server) {
			out = append(out, t)
		}
	}
	return out, nil
}

// servers groups the agent's tools by server, leaving out the direct
// ones, in a stable order.
func (a *Agent) servers(ts []tool.Tool) []Server {
	by := map[string]*Server{}
	var order []string
	for _, t := range ts {
		server, raw, ok := mcp.Origin(t)
		if !ok || slices.Contains(a.o.Direct, server) {
			continue
		}
		s := by[server]
		if s == nil {
			s = &Server{Name: server}
			by[server] = s
			order = append(order, server)
		}
		def := t.Def()
		s.Tools = append(s.Tools, Tool{Name: raw, Description: def.Description, Schema: def.Parameters})
	}
	sort.Strings(order)
	out := make([]Server, 0, len(order))
	for _, n := range order {
		out = append(out, *by[n])
	}
	return out
}

// write writes the tree when it changed and returns the servers it has
// wrappers of.
func (a *Agent) write(ts []tool.Tool) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.o.Shared != "" {
		files, coded := Files(a.servers(ts), true)
		maps.Copy(files, a.o.Custom)
		if !exists(filepath.Join(a.o.Shared, "servers")) || !exists(filepath.Join(a.o.Shared, ".mcp")) {
			if err := Write(DirWriter(a.o.Shared), files); err != nil {
				a.o.Warn(fmt.Sprintf("agent %s: %v", a.o.ID, err))
			}
		}
		return coded
	}
	files, coded := Files(a.servers(ts), false)
	sum := hashFiles(files)
	if sum == a.written && exists(filepath.Join(a.o.Root, ".mcp", "client.py")) {
		return coded
	}
	if !a.first {
		files["custom_tools/__init__.py"] = customToolsInit
		maps.Copy(files, a.o.Custom)
	}
	if err := Write(a.o.Out, files); err != nil {
		a.o.Warn(fmt.Sprintf("agent %s: %v", a.o.ID, err))
		return coded
	}
	a.written, a.first = sum, true
	return coded
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func hashFiles(files map[string]string) [32]byte {
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(files[k]), files[k])
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// WriteTree writes the tree before any tool is resolved: an agent with
// custom tools and no MCP server to wrap has no turn that would.
func (a *Agent) WriteTree(out Writer) {
	a.SetOutput(out, nil)
	a.write(nil)
}

// Call runs the agent's tool raw of server with args, as a wrapper asked
// (through the Hub). A tool the agent was not given is ErrNotGiven; a
// failure of the tool itself is a result with IsError, as in function
// calling.
func (a *Agent) Call(ctx context.Context, server, raw string, args json.RawMessage) (tool.Result, error) {
	ts, err := a.o.Source.Tools(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	a.mu.Lock()
	wrap := a.o.Wrap
	a.mu.Unlock()
	for _, t := range ts {
		if s, r, ok := mcp.Origin(t); ok && s == server && r == raw {
			return tool.Invoke(ctx, wrap(t), string(args), 0), nil
		}
	}
	return tool.Result{}, fmt.Errorf("%s of server %s is %w (agent %s)", raw, server, ErrNotGiven, a.o.ID)
}

// SharedDir is upstream's shared_tools_directory/<hash>: one tree for
// the agents whose code-based tools are the same (the same servers and
// custom-tool settings).
func SharedDir(base string, servers []string, excludeCustom []string, customPath string) string {
	s, e := slices.Clone(servers), slices.Clone(excludeCustom)
	slices.Sort(s)
	slices.Sort(e)
	b, _ := json.Marshal(map[string]any{"servers": s, "exclude_custom_tools": e, "custom_tools_path": customPath})
	sum := sha256.Sum256(b)
	return filepath.Join(base, fmt.Sprintf("%x", sum[:4]))
}
