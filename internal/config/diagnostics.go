package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity tells whether a diagnostic stops the config from loading.
type Severity int

const (
	Error   Severity = iota // the config cannot be used
	Warning                 // accepted; worth telling the user
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one problem found in a config, located in the source.
type Diagnostic struct {
	Severity   Severity
	File       string
	Line, Col  int    // 1-based; 0 when unknown (configs built in code)
	Key        string // path like "agents[1].backend.type" ("" for the whole file)
	Message    string
	Suggestion string // e.g. "did you mean 'openai'?"
}

// String renders the diagnostic on one line, compiler style, so editors and
// terminals can jump to it:
//
//	file.yaml:12:5: agents[1].backend.type: unknown backend type 'opena' — did you mean 'openai'?
//
// Warnings carry a "warning: " marker after the position.
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		b.WriteByte(':')
	}
	if d.Line > 0 {
		fmt.Fprintf(&b, "%d:", d.Line)
		if d.Col > 0 {
			fmt.Fprintf(&b, "%d:", d.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	if d.Key != "" {
		b.WriteString(d.Key)
		b.WriteString(": ")
	}
	b.WriteString(oneLine(d.Message))
	if d.Suggestion != "" {
		b.WriteString(" — ")
		b.WriteString(oneLine(d.Suggestion))
	}
	return b.String()
}

// Diagnostics is a list of diagnostics. Load and Parse return it as their
// error when it holds at least one Error; it then also carries the warnings,
// so `massgen --validate` can show everything at once.
type Diagnostics []Diagnostic

// Error lists the Error-severity diagnostics, one per line.
func (ds Diagnostics) Error() string {
	var lines []string
	for _, d := range ds {
		if d.Severity == Error {
			lines = append(lines, d.String())
		}
	}
	if len(lines) == 0 {
		return "no errors"
	}
	return strings.Join(lines, "\n")
}

// HasErrors reports whether any diagnostic is an Error.
func (ds Diagnostics) HasErrors() bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == Error })
}

// Err returns ds as an error when it holds an Error, and nil otherwise;
// it avoids the typed-nil trap of returning an empty Diagnostics as error.
func (ds Diagnostics) Err() error {
	if ds.HasErrors() {
		return ds
	}
	return nil
}

// Errors returns only the Error-severity diagnostics.
func (ds Diagnostics) Errors() Diagnostics { return ds.filter(Error) }

// Warnings returns only the Warning-severity diagnostics.
func (ds Diagnostics) Warnings() Diagnostics { return ds.filter(Warning) }

func (ds Diagnostics) filter(s Severity) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == s {
			out = append(out, d)
		}
	}
	return out
}

// sort orders diagnostics by position so output reads top to bottom; the
// sort is stable so messages about one line keep the order they were found in.
func (ds Diagnostics) sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}

// oneLine keeps a diagnostic to a single line whatever a value contains.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// describe names a value's YAML type and shows short scalars, for messages
// like `must be a boolean (true or false), got string "true"`.
func describe(n *node) string {
	if n == nil {
		return "nothing"
	}
	switch n.kind {
	case kindNull:
		return "null"
	case kindBool:
		return fmt.Sprintf("boolean %t", n.b)
	case kindInt:
		return fmt.Sprintf("integer %d", n.i)
	case kindFloat:
		return fmt.Sprintf("number %g", n.f)
	case kindString:
		return "string " + quoteShort(n.s)
	case kindMap:
		return "a map"
	case kindSeq:
		return "a list"
	}
	return "an unknown value"
}

// quoteShort quotes s for a message, cut to a readable length.
func quoteShort(s string) string {
	const max = 40
	r := []rune(s)
	if len(r) > max {
		return fmt.Sprintf("%q…", string(r[:max]))
	}
	return fmt.Sprintf("%q", s)
}
