package codex

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// toml writes the few TOML shapes Codex's config.toml needs: top-level
// keys, then tables of keys. Every key is quoted and every string escaped,
// so names from a user's config (an MCP server called "a.b") cannot break
// the file's structure.
type toml struct{ b strings.Builder }

func (t *toml) table(path ...string) {
	if t.b.Len() > 0 {
		t.b.WriteByte('\n')
	}
	t.b.WriteByte('[')
	for i, p := range path {
		if i > 0 {
			t.b.WriteByte('.')
		}
		t.b.WriteString(quote(p))
	}
	t.b.WriteString("]\n")
}

func (t *toml) set(key string, v any) {
	t.b.WriteString(quote(key))
	t.b.WriteString(" = ")
	t.b.WriteString(value(v))
	t.b.WriteByte('\n')
}

func (t *toml) String() string { return t.b.String() }

// value renders a string, bool, int, string list or string map.
func value(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = quote(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]string:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = quote(k) + " = " + quote(v[k])
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	panic(fmt.Sprintf("codex: no TOML for %T", v))
}

// quote is a TOML basic string: quotes, backslashes and control
// characters escaped; invalid UTF-8 becomes U+FFFD.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, string(utf8.RuneError)) {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
