package inputlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// The reference configs live beside the project, never in it.
var referenceDirs = []string{
	"../../../shared/reference/massgen-configs",
	"../../../shared/reference/massgen-configs-v0.1.73",
}

// Every upstream example config passes the check, and the scan's count of
// its nesting stays far below the limit (9 at most today: the message's
// "MassGen configs need fewer than 10").
func TestReferenceConfigsPass(t *testing.T) {
	found := 0
	for _, dir := range referenceDirs {
		if _, err := os.Stat(dir); err != nil {
			t.Logf("reference configs not found at %s: %v", dir, err)
			continue
		}
		err := filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() {
				return err
			}
			switch filepath.Ext(path) {
			case ".yaml", ".yml", ".json":
			default:
				return nil
			}
			found++
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := CheckYAML(data, path, Config); err != nil {
				t.Errorf("refused: %v", err)
			}
			if _, err := ParseYAML(data, path, Config); err != nil && errors.As(err, new(*Error)) {
				t.Errorf("refused after lexing: %v", err)
			}
			got, _, _ := yamlDepth(data)
			toks, _ := tokenDepth(lexer.Tokenize(string(data)))
			if got > 16 || got < toks {
				t.Errorf("%s: scan counts %d levels, goccy's tokens %d", path, got, toks)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Skip("no reference configs beside the project")
	}
	t.Logf("%d reference configs pass", found)
}

// astDepth is the nesting of goccy's tree.
func astDepth(n ast.Node) int {
	switch v := n.(type) {
	case *ast.MappingNode:
		d := 0
		for _, mv := range v.Values {
			d = max(d, astDepth(mv.Key), astDepth(mv.Value))
		}
		return d + 1
	case *ast.MappingValueNode:
		return 1 + max(astDepth(v.Key), astDepth(v.Value))
	case *ast.SequenceNode:
		d := 0
		for _, it := range v.Values {
			d = max(d, astDepth(it))
		}
		return d + 1
	case *ast.AnchorNode:
		return astDepth(v.Value)
	case *ast.TagNode:
		return astDepth(v.Value)
	case *ast.MappingKeyNode:
		return astDepth(v.Value)
	}
	return 0
}

// boundOK reports why the scan's count is below goccy's, if it is.
func boundOK(data []byte) error {
	got, flow, err := yamlDepth(data)
	if err != nil {
		return nil // refused outright
	}
	tokens := lexer.Tokenize(string(data))
	if tokens.InvalidToken() != nil {
		return nil // goccy's parser refuses it before parsing anything
	}
	if _, toks := tokenDepth(tokens); flow < toks {
		return fmt.Errorf("scan counts %d levels of flow nesting, goccy's tokens %d", flow, toks)
	}
	f, perr := parser.ParseBytes(data, 0)
	if perr != nil {
		return nil
	}
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			if a := astDepth(doc.Body); got < a {
				return fmt.Errorf("scan counts %d levels, goccy's tree %d", got, a)
			}
		}
	}
	return nil
}

var depthSeeds = []string{
	"[{][{\n",
	"- - !0000\n-\n",
	"- - !0\n- - !0\n- - !0\n- x\n",
	"0:\x00: 0\n \": [[\n",
	"...[[\n",
	"0: [00\n -, \"\n00[[\n",
	"! 0:\n 00:\n",
	"- !\n- 0\n",
	"0:\n0 \n:\n",
	"0: !0\n0:\n",
	"a: &x\nb: &y\nc: 1\n",
	"- \n0:\n- \n0:\n- \n0:\n",
	"a:\n  - \n  b:\n  - # c\n  c: 1\n",
	"a: b\n",
	"a:\n  b:\n    c: [1, {d: e}]\n",
	"- - - x\n",
	"a:\n- b\n- c:\n  - d\n",
	"key: value\n  'x [[[['\n",
	"key: value\n  - x: 'z\nb: [[\n",
	"a: |\n  te[xt\n x: [[\n",
	"a: >2\n   x\n  y\nb: [[\n",
	"a: \"x\n[ y\"\nb: [[\n",
	"\"a\"#c [\n",
	"a: b # c [[\n",
	"[a\n 'b [' ]\n",
	"{a:'x, 'y: [[[[]]]]}\n",
	"&a [*a]\n",
	"a: &x\n  b: 1\nc: *x\n",
	"? [a, [b]]\n: [c]\n",
	"--- [[a]]\n--- {b: [c]}\n",
	"a: 'it''s' [x]\n",
	"a\r[[[[\r",
	"# c\r[[[\r]]]\r",
	"a: b\n  c: [[\n",
	"!!map {a: !!seq [b]}\n",
	"a: -\n  [[x]]\n",
	"- |\n  x\n- [[y]]\n",
	"a:\n  b: |\n   x\n  c: [[d]]\n",
	"a: x\n# c\n  'y\nb: [[c]]\n",
	"[a, b]: [[c]]\n",
	"- k: v\n  'x': [[y]]\n",
	"a: \"x\\\"[\"\nb: [[c]]\n",
	"- \n0:\n- \n0:\n- \n0:\n",
	"a:\n  - \n  b:\n  - # c\n  c: 1\n",
}

func TestDepthBoundSeeds(t *testing.T) {
	for _, s := range depthSeeds {
		if err := boundOK([]byte(s)); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// FuzzYAMLDepthBound checks the promise the scan makes: it never counts
// fewer levels than goccy's tree has, nor fewer flow levels than goccy's
// tokens open (the parser's cost is in those, valid or not).
// `go test -fuzz=FuzzYAMLDepthBound ./internal/inputlimit` explores.
func FuzzYAMLDepthBound(f *testing.F) {
	for _, s := range depthSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		if err := boundOK(data); err != nil {
			t.Fatal(err)
		}
	})
}

// allocs runs fn and returns the bytes it allocated.
func allocs(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func blockNest(size int) []byte {
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		sb.WriteString(strings.Repeat(" ", i))
		sb.WriteString("a:\n")
	}
	return []byte(sb.String())
}

func laughs(levels, width int) []byte {
	var sb strings.Builder
	sb.WriteString("l0: &l0 [lol]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&sb, "l%d: &l%d [", i, i)
		for j := 0; j < width; j++ {
			if j > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "*l%d", i-1)
		}
		sb.WriteString("]\n")
	}
	return []byte(sb.String())
}

// The attack of issue 17: 100 KB and 400 KB of nesting are refused, at the
// line and column where the limit is crossed, allocating next to nothing.
func TestHostileYAMLRefusedCheaply(t *testing.T) {
	cases := []struct {
		name  string
		data  []byte
		limit string
		at    string // file:line:col
	}{
		{"100KB of [", []byte(strings.Repeat("[", 100_000)), "depth", "x.yaml:1:65"},
		{"400KB of [", []byte(strings.Repeat("[", 400_000)), "depth", "x.yaml:1:65"},
		{"100KB of {a:", []byte(strings.Repeat("{a: ", 25_000)), "depth", "x.yaml:1:257"},
		{"400KB of {a:", []byte(strings.Repeat("{a: ", 100_000)), "depth", "x.yaml:1:257"},
		{"100KB of - ", []byte(strings.Repeat("- ", 50_000)), "depth", "x.yaml:1:129"},
		{"400KB of - ", []byte(strings.Repeat("- ", 200_000)), "depth", "x.yaml:1:129"},
		{"100KB of block nesting", blockNest(100_000), "depth", "x.yaml:65:65"},
		{"100KB of tags ending lines", []byte(strings.Repeat("- - !t\n", 15_000)), "depth", "x.yaml:33:1"},
		{"100KB of empty entries and keys in one column", []byte(strings.Repeat("- \na:\n", 20_000)), "depth", "x.yaml:65:1"},
		{"400KB of block nesting", blockNest(400_000), "depth", "x.yaml:65:65"},
		{"billion laughs", laughs(9, 10), "aliases", "x.yaml:6:"},
		{"too many aliases", []byte("a: &a x\nb: [" + strings.Repeat("*a, ", 2000) + "]\n"), "aliases", "x.yaml:2:"},
		{"400KB of [ within the size limit", []byte(strings.Repeat("[", 400_000)), "size", "x.yaml:1:262145"},
		{"2 MiB", []byte("a: " + strings.Repeat("b", 2<<20) + "\n"), "size", "x.yaml:1:262145"},
	}
	// The size limit alone refuses 400 KB; the nesting check must be cheap
	// without it too.
	lim := Config
	lim.MaxBytes = 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim := lim
			if c.limit == "size" {
				lim = Config
			}
			var err error
			n := allocs(func() { err = CheckYAML(c.data, "x.yaml", lim) })
			var le *Error
			if !errors.As(err, &le) || le.Limit != c.limit {
				t.Fatalf("want a %s error, got %v", c.limit, err)
			}
			if !strings.Contains(err.Error(), " at "+c.at) {
				t.Errorf("error %q does not name %s", err, c.at)
			}
			if n > 1<<20 {
				t.Errorf("the check allocated %d bytes", n)
			}
			// And through the parse entry point, before goccy's parser.
			n = allocs(func() { _, err = ParseYAML(c.data, "x.yaml", lim) })
			if !errors.As(err, &le) || n > 50<<20 {
				t.Errorf("ParseYAML: %v after %d bytes", err, n)
			}
			t.Logf("%v", err)
		})
	}
}
