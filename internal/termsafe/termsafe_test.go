package termsafe

import (
	"bytes"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain text\nwith\ttabs", "plain text\nwith\ttabs"},
		{"café ✓ 日本語 🙂", "café ✓ 日本語 🙂"},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`},
		{"\x1b[2Jcleared", `\x1b[2Jcleared`},
		{"over\rwrite", `over\x0dwrite`},
		{"back\bspace\x7f", `back\x08space\x7f`},
		{"c1 \u009b31m csi \u009d osc", `c1 \u009b31m csi \u009d osc`},
		{"raw \x9b byte", `raw \x9b byte`},
		{"nul\x00", `nul\x00`},
	}
	for _, c := range cases {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.ContainsAny(String(c.in), "\x1b\x07\r\b\x00\u009b\u009d") {
			t.Errorf("String(%q) keeps a control character", c.in)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b)
	if Writer(w) != w {
		t.Error("a termsafe writer is wrapped twice")
	}
	in := "answer: \x1b]0;pwned\x07 \x1b[2J done\n"
	n, err := w.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if got, want := b.String(), "answer: \\x1b]0;pwned\\x07 \\x1b[2J done\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
