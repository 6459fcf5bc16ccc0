package inputlimit

import (
	"errors"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/lexer"
)

// The second count, on goccy's tokens, refuses what the byte scan might
// have misjudged, before the parser runs.
func TestTokenCheckIsABackstop(t *testing.T) {
	for _, src := range []string{
		"a: " + strings.Repeat("[", 100),
		strings.Repeat("- ", 100) + "x",
		"a: &x " + strings.Repeat("{b: ", 100),
	} {
		err := checkTokens(lexer.Tokenize(src), "x.yaml", Config)
		var le *Error
		if !errors.As(err, &le) || le.Limit != "depth" || le.Line != 1 || le.Col == 0 {
			t.Errorf("%.20q: %v", src, err)
		}
	}
	f, err := ParseYAML([]byte("a: [b, {c: d}]\n"), "x.yaml", Config)
	if err != nil || len(f.Docs) != 1 {
		t.Fatalf("%v %v", f, err)
	}
}
