package cli

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/llm"
)

// Vendor is what one coding-agent CLI needs that others do not.
type Vendor interface {
	// Type is the backend type that selects it ("claude_code").
	Type() string
	// Program is the executable's name, looked up on PATH ("claude").
	Program() string
	// Prepare lays out what the CLI reads for one task (settings, its MCP
	// configuration, a system prompt file) under inv.Home and returns how
	// to start it.
	Prepare(inv *Invocation) (Command, error)
	// Decoder reads one task's output.
	Decoder() Decoder
}

// Resolver is a Vendor whose program, as found on PATH, only launches
// another executable (an npm package's node script that starts the CLI's
// native binary): Executable gives the file to run instead, or found
// itself. The process massgen starts, watches and kills is then the CLI,
// with no launcher between them that a kill -9 of massgen could leave
// without its child, and without the launcher's start-up.
type Resolver interface {
	Executable(found string) string
}

// Checker is a Vendor that judges the backend block's keys before a run:
// each key the CLI has no equivalent for is a warning that names it.
type Checker interface {
	Check(options map[string]any) (warnings []string)
}

// Invocation is one task of a CLI agent, as a vendor lays it out.
type Invocation struct {
	Task agent.Task
	// Workdir is the agent's workspace: the CLI's working directory and the
	// one place it may write (besides Home).
	Workdir string
	// Home is the CLI's private home, kept for the agent's whole run: its
	// settings, sessions and caches (HOME points here). Nothing of the
	// user's own home is read, but a copy of the CLI's login when the
	// agent has no key (Login).
	Home string
	// Model is the model to use ("": the CLI's default).
	Model string
	// BaseURL is the provider endpoint ("": the vendor's own).
	BaseURL string
	// APIKey is the provider key, passed the way the CLI's docs say ("":
	// none; the CLI's own login, if any, applies).
	APIKey string
	// Session is the CLI's session of the agent's previous task, to
	// resume ("": a new one).
	Session string
	// System is the agent's instructions; Prompt this task's message.
	System, Prompt string
	// Workflow is the workflow tools' server (coordination tasks only).
	Workflow *MCPServer
	// MCPServers are the agent's own MCP servers from its config.
	MCPServers []MCPServer
	// Options are the backend block's keys (permission_mode,
	// allowed_tools, max_turns, …) as the config gives them.
	Options map[string]any
	// WorkflowOnly is set once the round's hard time limit has passed
	// (round.go): the CLI may only call the workflow tools, so a vendor
	// takes its CLI's own tools away where the CLI allows it.
	WorkflowOnly bool
	// Sandboxed is set when massgen runs the CLI in its sandbox
	// (Agent.Wrap): the CLI's own sandbox may then be off, and may have to
	// be (most cannot nest inside bubblewrap).
	Sandboxed bool
}

// WorkflowServer is the name the workflow tools' MCP server has in every
// CLI's configuration, so their tools read mcp__massgen__new_answer and
// the like.
const WorkflowServer = "massgen"

// MCPServer is an MCP server as a CLI's configuration names it: a
// streamable HTTP endpoint (URL, Headers) or a program over stdio
// (Command, Args, Env).
type MCPServer struct {
	Name    string
	URL     string
	Headers map[string]string
	Command string
	Args    []string
	Env     map[string]string
}

// Command is how to start a CLI for one task.
type Command struct {
	// Args follow the program's name.
	Args []string
	// Env is added to the CLI's environment (which has HOME, PATH, LANG,
	// TMPDIR and nothing of massgen's own), as KEY=VALUE.
	Env []string
	// Stdin, when set, is written to the CLI's standard input, then closed.
	Stdin string
	// Decoder, when set, reads this task's output in place of the
	// vendor's Decoder(): one that needs what Prepare laid out (a file the
	// CLI writes its usage to).
	Decoder Decoder
}

// Decoder reads what a CLI writes on its standard output, line by line.
type Decoder interface {
	// Line decodes one line into what the agent reports (Text, Reasoning,
	// ToolUsed, ModelCall, ...); lines it does not know give nothing.
	Line(line []byte) []agent.Outcome
	// End is what the CLI reported about the whole task once it exited.
	End() Result
}

// Stopper is a Decoder that can tell from a CLI's output that its task
// cannot succeed although the CLI goes on (one that waits for an
// unreachable provider until the turn's deadline): after a line that
// makes Stop true the CLI is ended at once, and End's Err is the task's.
type Stopper interface {
	Stop() bool
}

// Result is what a CLI reports about a task as a whole.
type Result struct {
	// Session is the CLI's session id, resumed by the agent's next task.
	Session string
	// Usage is the task's tokens (and CostUSD, when the CLI prices them).
	Usage llm.Usage
	// CostUSD is what the CLI says the task cost (0: not said).
	CostUSD float64
	// Text is the CLI's final message.
	Text string
	// Err is an error the CLI reported (a provider's refusal, a limit).
	Err error
}

var (
	vendorsMu sync.RWMutex
	vendors   = map[string]Vendor{}
)

// Register makes a vendor available by its type; vendor packages call it
// from init.
func Register(v Vendor) {
	vendorsMu.Lock()
	defer vendorsMu.Unlock()
	vendors[v.Type()] = v
}

// Lookup returns the vendor of a backend type.
func Lookup(typ string) (Vendor, bool) {
	vendorsMu.RLock()
	defer vendorsMu.RUnlock()
	v, ok := vendors[typ]
	return v, ok
}

// Types are the registered vendors' backend types, sorted.
func Types() []string {
	vendorsMu.RLock()
	defer vendorsMu.RUnlock()
	out := make([]string, 0, len(vendors))
	for t := range vendors {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Unused names, in order, the keys of a backend's options that a vendor
// neither takes nor leaves to massgen (known, and massgen's own
// command_line_* keys), each as a warning that the CLI named program has
// no equivalent for it: what Checker implementations say of them.
func Unused(options map[string]any, program string, known ...[]string) []string {
	var warnings []string
	for _, k := range slices.Sorted(maps.Keys(options)) {
		if strings.HasPrefix(k, "command_line_") || slices.ContainsFunc(known, func(l []string) bool { return slices.Contains(l, k) }) {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("'%s' has no equivalent in %s; it is ignored", k, program))
	}
	return warnings
}
