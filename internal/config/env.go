package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// expand replaces ${VAR} and ${VAR:-default} in s using getenv. It returns
// the names of variables that were unset (empty) and had no default, so the
// caller can say where they were used. Anything that is not a well-formed
// reference (a bare $, an unterminated ${, an invalid name) is left as
// written: configs contain prompts and shell snippets, and mangling them
// would be worse than not expanding.
//
// ${cwd} is kept literally: upstream replaces it with the backend's
// workspace directory when the workspace is created, not from the environment.
func expand(s string, getenv func(string) string) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		name, def, hasDef := strings.Cut(rest[:j], ":-")
		if !validEnvName(name) || (name == "cwd" && !hasDef) {
			b.WriteString("${")
			s = rest
			continue
		}
		val := getenv(name)
		if val == "" {
			if hasDef {
				val = def
			} else {
				missing = append(missing, name)
			}
		}
		b.WriteString(val)
		s = rest[j+1:]
	}
	return b.String(), missing
}

func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// LoadDotEnv reads KEY=VALUE files in the order given and returns their
// variables. As with upstream's python-dotenv (which never overrides a set
// variable), the first file to define a key wins. Missing files are skipped:
// the usual list (package dir, ~/.massgen/.env, ./.env) rarely all exist.
// The returned map is always usable; the error, if any, reports unreadable
// files and malformed lines (which are skipped), joined.
//
// Syntax: blank lines and # comments are ignored; an optional `export `
// prefix is allowed; values may be 'single-quoted' (literal), "double-quoted"
// (\n, \t, \", \\ escapes; may span lines) or bare (a " #" starts a comment).
// Values are not interpolated.
func LoadDotEnv(paths ...string) (map[string]string, error) {
	vars := map[string]string{}
	var errs []error
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cannot read env file: %w", err))
			continue
		}
		errs = append(errs, parseDotEnv(data, p, vars)...)
	}
	return vars, errors.Join(errs...)
}

func parseDotEnv(data []byte, path string, vars map[string]string) []error {
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		start := lineNo
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
		key, raw, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validEnvName(key) {
			errs = append(errs, fmt.Errorf("%s:%d: malformed line (want KEY=VALUE); skipped", path, start))
			continue
		}
		raw = strings.TrimLeft(raw, " \t")
		var val string
		switch {
		case strings.HasPrefix(raw, `"`):
			// A double-quoted value may continue on the following lines.
			body := raw[1:]
			v, closed := unquoteDouble(body)
			for !closed && sc.Scan() {
				lineNo++
				body += "\n" + sc.Text()
				v, closed = unquoteDouble(body)
			}
			if !closed {
				errs = append(errs, fmt.Errorf("%s:%d: unterminated double quote; skipped", path, start))
				continue
			}
			val = v
		case strings.HasPrefix(raw, "'"):
			end := strings.IndexByte(raw[1:], '\'')
			if end < 0 {
				errs = append(errs, fmt.Errorf("%s:%d: unterminated single quote; skipped", path, start))
				continue
			}
			val = raw[1 : 1+end]
		default:
			if i := strings.Index(raw, " #"); i >= 0 {
				raw = raw[:i]
			}
			if i := strings.Index(raw, "\t#"); i >= 0 {
				raw = raw[:i]
			}
			val = strings.TrimSpace(raw)
		}
		if _, seen := vars[key]; !seen {
			vars[key] = val
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", path, err))
	}
	return errs
}

// unquoteDouble decodes the body of a double-quoted value up to its closing
// quote, reporting whether the quote was found.
func unquoteDouble(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), true
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '"', '\\':
				b.WriteByte(s[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// Getenv layers .env values under the real environment: a variable set (to a
// non-empty value) in the real environment wins, as upstream's load_dotenv
// never overrides it. real defaults to os.Getenv when nil. Because real only
// returns strings, a variable set to "" in the environment counts as unset.
func Getenv(files map[string]string, real func(string) string) func(string) string {
	if real == nil {
		real = os.Getenv
	}
	return func(name string) string {
		if v := real(name); v != "" {
			return v
		}
		return files[name]
	}
}
