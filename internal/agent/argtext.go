package agent

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// ToolTextEmitter is an Emitter that also shows the text of a workflow
// action while the model streams it: the `content` argument of new_answer,
// which is where an answer's text is when the model writes it as the
// call's arguments (the simulator always does, and so do many models).
type ToolTextEmitter interface {
	ToolText(tool, s string)
}

// argTexts follows the argument fragments of one response's tool calls and
// decodes, as it streams, the string argument that holds an answer.
type argTexts struct {
	calls map[string]*argText // by call (id and name)
}

// feed takes one ChunkToolArgs and returns the tool and the newly decoded
// text of its answer argument ("" when the call has none, or not yet).
func (a *argTexts) feed(c llm.Chunk) (tool, text string) {
	if c.ToolCall == nil || c.ToolCall.Name != coord.ToolNewAnswer {
		return "", ""
	}
	if a.calls == nil {
		a.calls = map[string]*argText{}
	}
	k := c.ToolCall.ID + "\x00" + c.ToolCall.Name
	p := a.calls[k]
	if p == nil {
		p = &argText{want: "content"}
		a.calls[k] = p
	}
	return c.ToolCall.Name, p.feed(c.Text)
}

// argText is an incremental reader of a JSON object that yields the
// decoded characters of one top-level string member as they arrive. It
// reads each byte once, so a long answer costs linear time.
type argText struct {
	want string // the member's name

	depth       int
	inStr, esc  bool
	isKey       bool
	key         []byte // the key being read (raw; "content" needs no unescaping)
	lastKey     string
	expectColon bool
	expectValue bool

	inValue bool   // inside the wanted member's string
	hex     []byte // \u digits read so far (nil: not in a \u escape)
	hi      rune   // a high surrogate waiting for its pair
	done    bool   // the wanted string ended
}

func (p *argText) feed(s string) string {
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if p.inValue {
			p.value(c, &out)
			continue
		}
		if p.inStr {
			switch {
			case p.esc:
				p.esc = false
			case c == '\\':
				p.esc = true
				continue
			case c == '"':
				p.inStr = false
				if p.isKey {
					p.lastKey, p.expectColon = string(p.key), true
				}
				continue
			}
			if p.isKey {
				p.key = append(p.key, c)
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		case '{', '[':
			p.depth++
			p.expectValue = false
		case '}', ']':
			p.depth--
		case ':':
			p.expectValue = p.expectColon && p.depth == 1
			p.expectColon = false
		case ',':
			p.expectValue = false
		case '"':
			if p.depth == 1 && p.expectValue && p.lastKey == p.want && !p.done {
				p.inValue, p.expectValue = true, false
				continue
			}
			p.inStr, p.isKey = true, p.depth == 1 && !p.expectValue
			p.key, p.expectValue = p.key[:0], false
		default:
			p.expectValue = false
		}
	}
	return out.String()
}

// value decodes one byte of the wanted string.
func (p *argText) value(c byte, out *strings.Builder) {
	switch {
	case p.hex != nil:
		p.hex = append(p.hex, c)
		if len(p.hex) < 4 {
			return
		}
		n, err := strconv.ParseUint(string(p.hex), 16, 16)
		p.hex = nil
		r := rune(n)
		if err != nil {
			r = utf8.RuneError
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			p.flushHi(out)
			p.hi = r
			return
		case r >= 0xDC00 && r < 0xE000 && p.hi != 0:
			r = 0x10000 + (p.hi-0xD800)<<10 + (r - 0xDC00)
			p.hi = 0
		default:
			p.flushHi(out)
		}
		out.WriteRune(r)
	case p.esc:
		p.esc = false
		if c == 'u' {
			p.hex = make([]byte, 0, 4)
			return
		}
		p.flushHi(out)
		switch c {
		case 'n':
			out.WriteByte('\n')
		case 't':
			out.WriteByte('\t')
		case 'r':
			out.WriteByte('\r')
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		default: // " \ / and anything a lenient model writes
			out.WriteByte(c)
		}
	case c == '\\':
		p.esc = true
	case c == '"':
		p.flushHi(out)
		p.inValue, p.done = false, true
	default:
		p.flushHi(out)
		out.WriteByte(c)
	}
}

// flushHi writes a high surrogate that found no pair as U+FFFD.
func (p *argText) flushHi(out *strings.Builder) {
	if p.hi != 0 {
		out.WriteRune(utf8.RuneError)
		p.hi = 0
	}
}
