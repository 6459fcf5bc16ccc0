package inputlimit

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"a": [1, {"b": "c"}]}`, true},
		{deep(MaxJSONDepth), true},
		{deep(MaxJSONDepth + 1), false},
		{`{"s": "` + strings.Repeat("[", 1000) + `"}`, true},   // brackets in a string
		{`{"s": "\"` + strings.Repeat("{", 1000) + `"}`, true}, // after an escaped quote
		{strings.Repeat(`{"a":`, 200), false},
	} {
		err := CheckJSON([]byte(c.in), MaxJSONDepth)
		if (err == nil) != c.ok {
			t.Errorf("%.40q: %v", c.in, err)
		}
		if c.ok && !json.Valid([]byte(c.in)) {
			t.Errorf("%.40q is not JSON", c.in)
		}
	}
	err := CheckJSON([]byte("{\"a\":\n  "+strings.Repeat("[", 200)), 128)
	var le *Error
	if !errors.As(err, &le) || le.Line != 2 || le.Col != 130 || le.Offset != 135 {
		t.Errorf("got %+v", err)
	}
	if n := allocs(func() { _ = CheckJSON([]byte(strings.Repeat("[", 100_000)), 128) }); n > 1<<20 {
		t.Errorf("allocated %d bytes", n)
	}
}
