package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// MCPServer is one entry of a backend's `mcp_servers:`, which is a list of
// servers with a `name` each, or a map of name to server (upstream accepts
// both). ${VAR} references are expanded everywhere; the ones that were
// not set are kept in UnsetVars, so that starting the server can refuse
// with their names (loading only warns: a config lists servers an agent
// may never reach).
type MCPServer struct {
	Name string
	Type string // stdio | streamable-http | sse; inferred from url/command when absent
	// stdio
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// HTTP
	URL     string
	Headers map[string]string
	// TimeoutSeconds bounds a call of one of its tools (0 = the default).
	TimeoutSeconds float64
	// InitTimeoutSeconds bounds the server's start: its process or
	// connection, the MCP handshake and the listing of its tools (0 = the
	// default, 30 s; the run's deadline bounds it too).
	InitTimeoutSeconds float64
	// AllowedTools and ExcludeTools are the server's own filters.
	AllowedTools, ExcludeTools []string
	UnsetVars                  []string
	Line                       int
}

// MCP server types; "http" is taken for streamable-http.
var mcpTypes = []string{"stdio", "streamable-http", "sse"}

var (
	mcpServerKeys = []string{"name", "type", "command", "args", "env", "cwd", "url", "headers", "timeout",
		"init_timeout", "http_read_timeout", "allowed_tools", "exclude_tools", "security", "description"}
	mcpNameRule = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })
)

// mcpServers reads `mcp_servers:` in its list or map form.
func (d *decoder) mcpServers(p *pair, key string) []MCPServer {
	if !d.present(key, p) {
		return nil
	}
	var out []MCPServer
	add := func(s MCPServer, ok bool, ikey string, at pos) {
		if !ok {
			return
		}
		if slices.ContainsFunc(out, func(e MCPServer) bool { return e.Name == s.Name }) {
			d.fail(at, join(ikey, "name"), fmt.Sprintf("two MCP servers are named '%s'", s.Name), "give each server its own name")
			return
		}
		out = append(out, s)
	}
	switch p.val.kind {
	case kindSeq:
		for ikey, it := range d.mapItems(p, key, "a list of servers or a map of name to server", "a map with name, type and command or url") {
			name, ok := d.str(join(ikey, "name"), it.get("name"))
			if !ok && !d.cfg.bad[join(ikey, "name")] {
				d.fail(it.pos, join(ikey, "name"), "an MCP server needs 'name'", "add name: NAME (its tools are offered as mcp__NAME__<tool>)")
				continue
			}
			s, ok := d.mcpServer(it, ikey, name)
			add(s, ok, ikey, it.pos)
		}
	case kindMap:
		for _, e := range p.val.pairs {
			ikey := join(key, e.key)
			d.cfg.loc[ikey] = e.keyPos
			if e.val.kind != kindMap {
				d.typeError(ikey, e.val, "a map with type and command or url")
				continue
			}
			s, ok := d.mcpServer(e.val, ikey, e.key)
			add(s, ok, ikey, e.keyPos)
		}
	default:
		d.typeError(key, p.val, "a list of servers or a map of name to server")
	}
	return out
}

// mcpServer reads one server; ok is false when it cannot be used.
func (d *decoder) mcpServer(n *node, key, name string) (MCPServer, bool) {
	s := MCPServer{Name: name, Line: n.pos.line}
	ok := true
	bad := func(field, msg, sugg string) {
		at := n.pos
		if f := n.get(field); f != nil {
			at = f.keyPos
		}
		d.fail(at, join(key, field), msg, sugg)
		ok = false
	}
	for _, e := range n.pairs {
		switch {
		case e.key == "security":
			d.ignore(e.keyPos, join(key, e.key), "mcp_servers.security",
				"'security' is accepted but not enforced: massgen starts exactly the command the config names", "")
		case e.key == "http_read_timeout":
			d.seconds(join(key, e.key), e, "300")
		case e.key == "defer_loading":
			d.upstreamValue(e, join(key, e.key), deferLoading)
		case !slices.Contains(mcpServerKeys, e.key):
			d.unknown(e, key, mcpServerKeys)
		}
	}
	switch {
	case !mcpNameRule().MatchString(name):
		bad("name", fmt.Sprintf("invalid MCP server name '%s'", name), "use letters, digits, '_' and '-' only")
	case strings.Contains(name, "__"):
		bad("name", fmt.Sprintf("MCP server name '%s' contains '__'", name),
			"'__' separates the server from the tool in mcp__<server>__<tool>; use a single '_'")
	}
	s.Type, _ = d.str(join(key, "type"), n.get("type"))
	s.URL, _ = d.str(join(key, "url"), n.get("url"))
	switch cp := n.get("command"); {
	case cp == nil || cp.val.isNull():
	case cp.val.kind == kindString:
		s.Command = cp.val.s
	default:
		if argv, good := d.stringList(join(key, "command"), cp); good && len(argv) > 0 {
			s.Command, s.Args = argv[0], argv[1:]
		}
	}
	if args, good := d.stringList(join(key, "args"), n.get("args")); good {
		s.Args = append(s.Args, args...)
	}
	s.Env = d.stringMap(n, key, "env")
	s.Headers = d.stringMap(n, key, "headers")
	s.Cwd, _ = d.str(join(key, "cwd"), n.get("cwd"))
	s.AllowedTools, _ = d.stringList(join(key, "allowed_tools"), n.get("allowed_tools"))
	s.ExcludeTools, _ = d.stringList(join(key, "exclude_tools"), n.get("exclude_tools"))
	if v, good := d.seconds(join(key, "init_timeout"), n.get("init_timeout"), "30"); good {
		s.InitTimeoutSeconds = v
	} else if n.get("init_timeout") != nil && !n.get("init_timeout").val.isNull() {
		ok = false
	}
	if v, good := d.seconds(join(key, "timeout"), n.get("timeout"), "300"); good {
		s.TimeoutSeconds = v
	} else if n.get("timeout") != nil && !n.get("timeout").val.isNull() {
		ok = false
	}
	switch s.Type {
	case "":
		s.Type = "stdio"
		if s.URL != "" && s.Command == "" {
			s.Type = "streamable-http"
		}
	case "http":
		s.Type = "streamable-http"
	}
	if !slices.Contains(mcpTypes, s.Type) {
		bad("type", fmt.Sprintf("invalid MCP server type '%s'", s.Type), oneOf(s.Type, mcpTypes))
	}
	if s.Type == "stdio" && s.Command == "" && !d.cfg.bad[join(key, "command")] {
		bad("command", fmt.Sprintf("MCP server '%s' (type stdio) needs 'command'", name), "add command: PROGRAM (and args: [...])")
	}
	if s.Type != "stdio" && s.URL == "" && !d.cfg.bad[join(key, "url")] {
		bad("url", fmt.Sprintf("MCP server '%s' (type %s) needs 'url'", name, s.Type), "add url: http://HOST:PORT/mcp")
	}
	s.UnsetVars = unsetVars(n)
	return s, ok
}

// stringMap reads a map of string to string (env, headers); numbers and
// booleans are taken as written, as a shell would.
func (d *decoder) stringMap(n *node, key, field string) map[string]string {
	m, ok := d.mapping(join(key, field), n.get(field), "a map of name to value")
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, e := range m.pairs {
		switch e.val.kind {
		case kindString:
			out[e.key] = e.val.s
		case kindInt, kindFloat, kindBool:
			out[e.key] = fmt.Sprint(plain(e.val))
		default:
			d.typeError(join(join(key, field), e.key), e.val, "a string")
		}
	}
	return out
}

// unsetVars collects the unset ${VAR}s of a subtree, once each.
func unsetVars(n *node) []string {
	var out []string
	var walk func(*node)
	walk = func(n *node) {
		for _, v := range n.unset {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		for _, p := range n.pairs {
			walk(p.val)
		}
		for _, it := range n.items {
			walk(it)
		}
	}
	walk(n)
	return out
}
