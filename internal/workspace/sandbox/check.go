package sandbox

import (
	"fmt"
	"strings"
)

// Check applies the allow and block lists to a command line. The line is
// split into its simple commands (at ;, &, &&, ||, |, newlines and inside
// $(…) and backticks, outside quotes), so `ls; rm -rf x` is not allowed by
// an allow list that names ls. Each simple command must match an allowed
// pattern from its start (when the list is not empty), and none may match
// a blocked pattern anywhere; the whole line is checked against the block
// list too.
func (r *Runner) Check(command string) error {
	for _, re := range r.blocked {
		if re.MatchString(command) {
			return fmt.Errorf("command refused: it matches command_line_blocked_commands pattern %q", re.String())
		}
	}
	for _, part := range Split(command) {
		for _, re := range r.blocked {
			if re.MatchString(part) {
				return fmt.Errorf("command refused: %q matches command_line_blocked_commands pattern %q", part, re.String())
			}
		}
		if len(r.allowed) == 0 {
			continue
		}
		ok := false
		for _, re := range r.allowed {
			if re.MatchString(part) {
				ok = true
				break
			}
		}
		if !ok {
			var pats []string
			for _, re := range r.allowed {
				pats = append(pats, strings.TrimSuffix(strings.TrimPrefix(re.String(), "^(?:"), ")"))
			}
			return fmt.Errorf("command refused: %q is not allowed; command_line_allowed_commands permits only: %s", part, strings.Join(pats, ", "))
		}
	}
	return nil
}

// Split cuts a shell command line into its simple commands, trimmed. It
// knows quotes, backslashes, the separators ; & && || | and newlines, and
// the command substitutions $(…) and `…`, whose contents are commands too.
// Anything it cannot follow stays in one piece, which only makes the
// lists stricter.
func Split(line string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			cur.WriteByte(c)
			if c == '\'' {
				quote = 0
			}
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(c)
			cur.WriteByte(line[i+1])
			i++
		case quote == '"' && c == '"':
			cur.WriteByte(c)
			quote = 0
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			// The substitution's own commands are checked as commands.
			depth, j := 1, i+2
			for ; j < len(line) && depth > 0; j++ {
				switch line[j] {
				case '(':
					depth++
				case ')':
					depth--
				}
			}
			inner := line[i+2 : max(j-1, i+2)]
			out = append(out, Split(inner)...)
			cur.WriteString(line[i:j])
			i = j - 1
		case c == '`':
			j := strings.IndexByte(line[i+1:], '`')
			if j < 0 {
				cur.WriteString(line[i:])
				i = len(line)
				break
			}
			out = append(out, Split(line[i+1:i+1+j])...)
			cur.WriteString(line[i : i+2+j])
			i += 1 + j
		case quote == '"':
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			cur.WriteByte(c)
		case c == '&' && (i > 0 && (line[i-1] == '>' || line[i-1] == '<') || i+1 < len(line) && line[i+1] == '>'):
			cur.WriteByte(c) // a redirection: 2>&1, &>file
		case c == ';' || c == '\n' || c == '|' || c == '&':
			flush()
		case c == '(' || c == ')':
			// a subshell: its insides are commands
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}
