package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	yaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/massgen/massgen/internal/inputlimit"
)

// fileError reports a config file that cannot be read. Its message is short
// and names the path; the os error stays reachable through errors.Is/As.
type fileError struct {
	msg string
	err error
}

func (e *fileError) Error() string { return e.msg }
func (e *fileError) Unwrap() error { return e.err }

// Load reads, parses and validates the config file at path. getenv resolves
// ${VAR} references (os.Getenv when nil; see Getenv for .env layering).
// A file that cannot be read yields a plain error ("config file not found:
// PATH"); anything wrong inside the file yields Diagnostics.
func Load(path string, getenv func(string) string) (*Config, error) {
	data, size, err := readLimited(path, Limits.MaxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &fileError{msg: "config file not found: " + path, err: err}
	case err != nil:
		return nil, &fileError{msg: fmt.Sprintf("cannot read config file %s: %v", path, unwrapPathError(err)), err: err}
	case size > int64(Limits.MaxBytes):
		// Read no further: a config larger than the limit is refused anyway.
		return nil, Diagnostics{limitDiagnostic(inputlimit.TooLarge(data, size, path, Limits))}
	}
	return Parse(data, path, getenv)
}

// Limits bound every config before it is parsed (inputlimit.Config: 256
// KiB, 64 levels of nesting, 1000 aliases); the largest upstream example
// is 13 KB and nests 9 levels.
var Limits = inputlimit.Config

// readLimited reads at most limit+1 bytes of the file at path, and
// returns them with the file's size (what was read, for a stream).
func readLimited(path string, limit int) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, 0, err
	}
	size := int64(len(data))
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = max(size, fi.Size())
	}
	return data, size, nil
}

// limitDiagnostic turns a refusal of the pre-parse check into a located
// diagnostic.
func limitDiagnostic(e *inputlimit.Error) Diagnostic {
	return Diagnostic{Severity: Error, File: e.File, Line: e.Line, Col: e.Col, Message: e.Message, Suggestion: e.Hint}
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse parses and validates a config held in memory; filename is used in
// diagnostics and to resolve relative paths (the sim scenario); getenv is
// os.Getenv when nil. On success
// the returned Config carries the warnings; on failure the error is
// Diagnostics holding every error and warning, sorted by position.
func Parse(data []byte, filename string, getenv func(string) string) (*Config, error) {
	cfg, diags := parse(data, filename, getenv)
	if diags.HasErrors() {
		return nil, diags
	}
	cfg.Warnings = diags
	return cfg, nil
}

// parse returns the config as far as it decoded, whatever the errors, and
// every diagnostic, sorted.
func parse(data []byte, filename string, getenv func(string) string) (*Config, Diagnostics) {
	if getenv == nil {
		getenv = os.Getenv
	}
	d := &decoder{
		file:   filename,
		getenv: getenv,
		cfg:    &Config{Path: filename, loc: map[string]pos{}, bad: map[string]bool{}, src: map[string]string{}},
	}
	root := d.parseYAML(data)
	if root != nil {
		d.expandEnv(root, "")
		d.decode(root)
	}
	cfg := d.cfg
	cfg.Raw = bytes.Clone(data) // the caller may reuse its buffer
	diags := d.diags
	if root != nil && !d.stopped {
		diags = append(diags, cfg.Validate()...)
	}
	diags.sort()
	return cfg, diags
}

// parseYAML returns the document's root node, or nil after recording why
// there is none. YAML and JSON both go through goccy's parser (JSON is YAML).
func (d *decoder) parseYAML(data []byte) *node {
	if strings.TrimSpace(string(data)) == "" {
		d.errorAt(pos{}, "", "config file is empty", "add an 'agents:' list; see the MassGen config format")
		return nil
	}
	// Duplicate keys are allowed here and reported by the converter as a
	// warning, because PyYAML accepts them (the last one wins).
	f, err := safeParse(data, d.file)
	if le, ok := errors.AsType[*inputlimit.Error](err); ok {
		d.diags = append(d.diags, limitDiagnostic(le))
		return nil
	}
	if err != nil {
		d.diags = append(d.diags, syntaxDiagnostic(d.file, err))
		return nil
	}
	var bodies []ast.Node
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			bodies = append(bodies, doc.Body)
		}
	}
	switch {
	case len(bodies) == 0:
		d.errorAt(pos{}, "", "config file holds only comments", "add an 'agents:' list")
		return nil
	case len(bodies) > 1:
		d.errorAt(nodePos(bodies[1]), "", "the file holds several YAML documents (---); a config must be a single document",
			"remove the extra '---' sections")
		return nil
	}
	conv := &converter{anchors: map[string]*node{}}
	conv.warn = func(p pos, key, msg, sugg string) { d.warnAt(p, key, msg, sugg) }
	conv.fail = func(p pos, msg string) {
		conv.failed = true // one structural error is enough; the rest would be noise
		d.errorAt(p, "", msg, "")
	}
	root := conv.convert(bodies[0], 0, "")
	if conv.failed {
		return nil
	}
	return root
}

// safeParse checks the document's size, nesting and aliases before the
// parser sees it (goccy's parser costs the square of the nesting depth: 100
// KB of '[' took 3.9 GB), and shields callers from a panic inside the
// third-party parser: a config loader must answer every input with a
// diagnostic, never a crash.
func safeParse(data []byte, file string) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("YAML parser failed on this input: %v", r)
		}
	}()
	return inputlimit.ParseYAML(data, file, Limits, parser.AllowDuplicateMapKey())
}

// syntaxDiagnostic turns a goccy error into one located line. goccy's own
// Error() prints a multi-line source excerpt; we keep only its message.
func syntaxDiagnostic(file string, err error) Diagnostic {
	d := Diagnostic{Severity: Error, File: file, Message: "invalid YAML: " + oneLine(err.Error())}
	var ye yaml.Error
	if errors.As(err, &ye) {
		d.Message = "invalid YAML: " + oneLine(ye.GetMessage())
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			d.Line, d.Col = tk.Position.Line, tk.Position.Column
		}
	}
	d.Suggestion = "check indentation, colons and quotes around this point"
	return d
}

// expandEnv replaces ${VAR} references in every string value. An unset
// variable is a warning with its location, since a silently empty base_url
// or model is hard to trace. In api_key it is more: the backend records it
// (Backend.APIKeyUnsetVar) and a run refuses to start, rather than fall
// back to the provider's usual variable and bill another key.
func (d *decoder) expandEnv(n *node, path string) {
	switch n.kind {
	case kindString:
		if n.expanded {
			return
		}
		n.expanded = true
		out, missing := expand(n.s, d.getenv)
		n.s, n.unset = out, missing
		switch vars := strings.Join(missing, ", "); {
		case vars == "":
		case lastKey(path) == "api_key":
			d.warnAt(n.pos, path, fmt.Sprintf("environment variable %s is not set, so this agent has no API key: a run will refuse to start", vars),
				"set it in the environment or a .env file, or remove api_key to use the provider's usual variable")
		default:
			d.warnAt(n.pos, path, fmt.Sprintf("environment variable %s is not set; using an empty value", vars),
				"set it in the environment or a .env file, or write ${VAR:-default}")
		}
	case kindMap:
		for _, p := range n.pairs {
			d.expandEnv(p.val, join(path, p.key))
		}
	case kindSeq:
		for i, it := range n.items {
			d.expandEnv(it, index(path, i))
		}
	}
}

// Key path helpers: "agents[0].backend.type".
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func lastKey(path string) string {
	if i := strings.LastIndexAny(path, ".]"); i >= 0 {
		return path[i+1:]
	}
	return path
}

// parent drops the last segment of a key path ("" at the top).
func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}
