package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated runs fn and returns the bytes it allocated (TotalAlloc counts
// every allocation, freed or not: a deterministic bound on the peak).
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func indentNest(size int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		sb.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	return sb.String()
}

func billionLaughs() string {
	var sb strings.Builder
	sb.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&sb, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	return sb.String()
}

// Issue 17, finding 10: 100 KB of nesting took the parser 3.9 GB and 13 s,
// 400 KB 22 GB. Each is now refused before the parser runs, with the line
// and column where the limit was crossed, for a few megabytes at most.
func TestParseRefusesHostileNesting(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"100 KB of [", strings.Repeat("[", 100_000), "x.yaml:1:65: config nests deeper than 64 levels — MassGen configs need fewer than 10"},
		{"100 KB of {a:", strings.Repeat("{a: ", 25_000), "x.yaml:1:257: config nests deeper than 64 levels"},
		{"100 KB of - - -", strings.Repeat("- ", 50_000), "x.yaml:1:129: config nests deeper than 64 levels"},
		{"100 KB of block indentation", indentNest(100_000), "x.yaml:65:65: config nests deeper than 64 levels"},
		// 400 KB is over the size limit, which is checked first.
		{"400 KB of [", strings.Repeat("[", 400_000), "x.yaml:1:262145: config is 390.6 KiB, larger than the 256 KiB limit"},
		{"400 KB of {a:", strings.Repeat("{a: ", 100_000), "x.yaml:1:262145: config is 390.6 KiB"},
		{"400 KB of block indentation", indentNest(400_000), "x.yaml:722:"},
		{"nesting after a valid start", oneAgent + "orchestrator: " + strings.Repeat("[", 100_000), "x.yaml:4:"},
		{"billion laughs", billionLaughs(), "config's aliases expand to more than 100000 nodes"},
		{"2 MiB", "agents: []\n# " + strings.Repeat("x", 2<<20), "x.yaml:2:262134: config is 2.0 MiB, larger than the 256 KiB limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = Parse([]byte(c.src), "x.yaml", envOf(nil)) })
			var ds Diagnostics
			if !errors.As(err, &ds) || len(ds.Errors()) != 1 {
				t.Fatalf("want one error diagnostic, got %v", err)
			}
			if got := ds.Errors()[0].String(); !strings.Contains(got, c.want) {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			// Parse copies the input (Config.Raw) and trims it once; the
			// rest must be small.
			if limit := uint64(3*len(c.src)) + 4<<20; n > limit {
				t.Errorf("allocated %d MB refusing it", n>>20)
			}
			if n > 50<<20 {
				t.Errorf("allocated %d MB, over 50 MB", n>>20)
			}
		})
	}
}

// A config file over the limit is refused without being read whole.
func TestLoadRefusesLargeFileUnread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(oneAgent + "# " + strings.Repeat("x", 1<<20) + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil { // 64 MiB, mostly a hole
		t.Fatal(err)
	}
	f.Close()
	var lerr error
	n := allocated(func() { _, lerr = Load(path, envOf(nil)) })
	if lerr == nil || !strings.Contains(lerr.Error(), path+":4:") || !strings.Contains(lerr.Error(), "config is 64 MiB, larger than the 256 KiB limit") {
		t.Errorf("got %v", lerr)
	}
	if n > 8<<20 {
		t.Errorf("allocated %d MB", n>>20)
	}
}

// Nesting a real config needs is far from the limit, and aliases are fine
// in the numbers people write them.
func TestParseAcceptsOrdinaryNestingAndAliases(t *testing.T) {
	src := "base: &b {type: openai, model: gpt-4o, extra_body: {a: {b: {c: [1, [2, [3]]]}}}}\nagents:\n" +
		strings.Repeat("  - {id: a, backend: *b}\n", 1)
	for i := 2; i <= 50; i++ {
		src += fmt.Sprintf("  - id: a%d\n    backend:\n      <<: *b\n      temperature: 0.5\n", i)
	}
	diagnose(t, src, nil) // unknown top-level key 'base' is a warning, no error
	if _, err := Parse([]byte(src), "x.yaml", envOf(nil)); err != nil {
		for _, d := range err.(Diagnostics).Errors() {
			t.Error(d)
		}
	}
}
