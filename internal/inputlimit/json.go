package inputlimit

import "fmt"

// MaxJSONDepth is the nesting a request body may have. A chat request is
// five levels deep to a message's content part, and the deepest things
// clients send are JSON Schemas (tools' parameters, response_format), two
// levels per schema level: OpenAI caps structured-output schemas at 10
// levels, so about 30 in all. 128 leaves room for schemas with $defs while
// keeping what a body can make the server build (and copy per agent) small;
// encoding/json's own limit is 10000.
const MaxJSONDepth = 128

// CheckJSON returns an *Error when data nests arrays and objects deeper
// than maxDepth, located at the bracket that crosses it. It counts '[' and
// '{' outside strings in one pass and allocates nothing; what it does not
// check (the syntax) is left to the decoder.
func CheckJSON(data []byte, maxDepth int) error {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > maxDepth {
				line, col := position(data, i)
				return &Error{Line: line, Col: col, Offset: i, Limit: "depth",
					Message: fmt.Sprintf("the JSON nests deeper than %d levels (at byte %d, line %d column %d)", maxDepth, i, line, col)}
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}
