package llmsim

import "unicode/utf8"

// nextToken returns the end of the simulated token starting at i: leading
// spaces (as in OpenAI's " word" tokens) plus up to four characters, never
// splitting a UTF-8 sequence. It always advances.
func nextToken(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	for n := 0; i < len(s) && n < 4; n++ {
		if s[i] == ' ' && n > 0 {
			break
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
	}
	return i
}

func countTokens(s string) int {
	n := 0
	for i := 0; i < len(s); i = nextToken(s, i) {
		n++
	}
	return n
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends s as the inside of a JSON string. Hand-written so
// that streaming a token costs no allocation; invalid UTF-8 becomes U+FFFD
// as encoding/json would make it.
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
