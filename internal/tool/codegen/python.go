package codegen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Server is one MCP server as its wrappers are written: its name in the
// config and its tools.
type Server struct {
	Name  string
	Tools []Tool
}

// Tool is one tool of a server: the server's own name for it, its
// description and the JSON Schema of its arguments.
type Tool struct {
	Name        string
	Description string
	Schema      map[string]any
}

// Ident is the Python name of a server's or a tool's name: upstream
// turns '-' into '_' (get-library-docs → get_library_docs); any other
// character a Python name cannot hold becomes '_' too, and a name that
// would be a keyword or start with a digit gets a leading '_'. Upstream
// writes the name as it is, which makes a file Python cannot import.
func Ident(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || (s[0] >= '0' && s[0] <= '9') || slices.Contains(pyKeywords, s) {
		s = "_" + s
	}
	return s
}

var pyKeywords = []string{"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
	"continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
	"is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
	// names the wrapper's own body uses
	"call_mcp_tool", "sys", "os", "Path", "Any", "Dict", "Optional"}

// pyStr is s as a Python string literal. A JSON string is one, and it
// escapes quotes, backslashes and control characters: text a server
// chose never becomes code.
func pyStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// docText is s made safe inside a """ docstring.
func docText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `"""`, `\"\"\"`)
}

// param is one argument of a wrapper.
type param struct {
	name, ident, typ, desc, def string
	required                    bool
}

// params are a tool's arguments, required ones first (Python's rule) in
// the schema's order of "required", then the optional ones by name (a
// JSON object has no order once decoded).
func params(schema map[string]any) []param {
	props, _ := schema["properties"].(map[string]any)
	var req []string
	if l, ok := schema["required"].([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok && props[s] != nil && !slices.Contains(req, s) {
				req = append(req, s)
			}
		}
	}
	var opt []string
	for k := range props {
		if !slices.Contains(req, k) {
			opt = append(opt, k)
		}
	}
	slices.Sort(opt)
	var out []param
	used := map[string]bool{}
	for i, name := range slices.Concat(req, opt) {
		ps, _ := props[name].(map[string]any)
		id := Ident(name)
		for used[id] {
			id += "_"
		}
		used[id] = true
		p := param{name: name, ident: id, typ: pyType(ps["type"]), required: i < len(req)}
		p.desc, _ = ps["description"].(string)
		p.def = "None"
		if d, ok := ps["default"]; ok {
			p.def = pyDefault(d)
		}
		out = append(out, p)
	}
	return out
}

func pyType(t any) string {
	s, _ := t.(string)
	switch s {
	case "string":
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "array":
		return "list"
	case "object":
		return "dict"
	}
	return "Any"
}

// pyDefault is a schema's default as a Python literal; one that is not a
// plain value is None (left out of the call, so the server's own default
// applies).
func pyDefault(d any) string {
	switch v := d.(type) {
	case string:
		return pyStr(v)
	case bool:
		if v {
			return "True"
		}
		return "False"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case json.Number:
		return v.String()
	}
	return "None"
}

// wrapper is servers/<server>/<tool>.py: upstream's file, with the
// function's name, arguments and docstring from the tool's schema.
func wrapper(server string, t Tool) string {
	fn := Ident(t.Name)
	desc := t.Description
	if desc == "" {
		desc = fmt.Sprintf("%s from %s MCP server", t.Name, server)
	}
	ps := params(t.Schema)
	var sig []string
	for _, p := range ps {
		if p.required {
			sig = append(sig, p.ident+": "+p.typ)
		} else {
			sig = append(sig, fmt.Sprintf("%s: Optional[%s] = %s", p.ident, p.typ, p.def))
		}
	}
	var doc strings.Builder
	doc.WriteString(`    """` + docText(desc) + "\n\n")
	if len(ps) > 0 {
		doc.WriteString("    Args:\n")
		for _, p := range ps {
			opt := ""
			if !p.required {
				opt = ", optional"
			}
			fmt.Fprintf(&doc, "        %s (%s%s): %s\n", p.ident, p.typ, opt, docText(oneLine(p.desc)))
		}
		doc.WriteString("\n")
	}
	doc.WriteString("    Returns:\n        Any: Tool execution result from MCP server\n    \"\"\"")
	args := "{}"
	if len(ps) > 0 {
		var items []string
		for _, p := range ps {
			items = append(items, "        "+pyStr(p.name)+": "+p.ident)
		}
		args = "{\n" + strings.Join(items, ",\n") + "\n    }"
	}
	return fmt.Sprintf(`"""
%[1]s - MCP tool wrapper

Auto-generated wrapper for the '%[2]s' tool from the '%[3]s' MCP server.
This wrapper handles MCP protocol communication transparently.

Note: Original MCP tool name is '%[2]s', Python function name is '%[1]s'.
"""

from typing import Any, Dict, Optional
import sys
import os
from pathlib import Path

# Add .mcp to path for MCP client
_mcp_path = Path(__file__).parent.parent.parent / '.mcp'
if str(_mcp_path) not in sys.path:
    sys.path.insert(0, str(_mcp_path))

from client import call_mcp_tool


def %[1]s(%[4]s) -> Any:
%[5]s
    return call_mcp_tool(
        server=%[6]s,
        tool=%[7]s,
        arguments=%[8]s
    )


if __name__ == "__main__":
    # CLI usage for testing
    import json

    # Simple CLI: pass first arg as location (or other primary param)
    if len(sys.argv) > 1:
        # For simple testing - assumes first param is primary argument
        result = %[1]s(sys.argv[1])
    else:
        print("Usage: python %[1]s.py <arguments>")
        print(f"\nDocumentation:\n{%[1]s.__doc__}")
        sys.exit(1)

    print(json.dumps(result, indent=2))
`, fn, docText(oneLine(t.Name)), docText(oneLine(server)), strings.Join(sig, ", "), doc.String(), pyStr(server), pyStr(t.Name), args)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// serverInit is servers/<server>/__init__.py.
func serverInit(server string, tools []Tool) string {
	var imports, all, list []string
	for _, t := range tools {
		id := Ident(t.Name)
		imports = append(imports, fmt.Sprintf("from .%s import %s", id, id))
		all = append(all, pyStr(id))
		if id != t.Name {
			list = append(list, fmt.Sprintf("- %s (MCP: %s)", id, docText(oneLine(t.Name))))
		} else {
			list = append(list, "- "+id)
		}
	}
	first := "tool_name"
	if len(tools) > 0 {
		first = Ident(tools[0].Name)
	}
	return fmt.Sprintf(`"""
%[1]s MCP Server Tools

Auto-generated module containing Python wrappers for all tools
from the '%[1]s' MCP server.

Available tools:
%[2]s

Usage:
    from servers.%[1]s import %[3]s
    result = %[3]s(...)
"""

%[4]s

__all__ = [%[5]s]
`, Ident(server), strings.Join(list, "\n"), first, strings.Join(imports, "\n"), strings.Join(all, ", "))
}

// serversInit is servers/__init__.py, upstream's registry.
func serversInit(servers []Server) string {
	var list []string
	for _, s := range servers {
		list = append(list, "- "+Ident(s.Name))
	}
	return `"""
MCP Server Tools

Auto-generated Python wrappers for MCP tools.

Available servers:
` + strings.Join(list, "\n") + `

Usage:
    # Import tools from servers
    from servers.weather import get_weather
    from servers.github import create_issue

    # Use the tools
    weather = get_weather("London")

Discover tools via filesystem:
    ls servers/                          # List available servers
    ls servers/weather/                  # List tools in a server
    cat servers/weather/get_weather.py   # Read tool docstring and code
"""

# This file makes servers/ a Python package.
# Agents discover tools using filesystem commands: ls, cat, grep
`
}

// customToolsInit is custom_tools/__init__.py when there are no custom
// tools to copy (upstream's text).
const customToolsInit = `"""
Custom Tools Directory

Add your custom Python tools here. Each tool should be a .py file with functions
that agents can import and use.

Example:
    # custom_tools/analyze_data.py
    def analyze_sales(csv_path: str) -> dict:
        \"\"\"Analyze sales data from CSV file.\"\"\"
        import pandas as pd
        df = pd.read_csv(csv_path)
        return {
            "total": df["amount"].sum(),
            "average": df["amount"].mean()
        }

Usage:
    from custom_tools.analyze_data import analyze_sales
    result = analyze_sales("sales.csv")
"""
`
