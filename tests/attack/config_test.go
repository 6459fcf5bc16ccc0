package attack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Config bombs: refused quickly, with bounded memory.
var bombs = map[string]func() string{
	"deep sequences, 100 KB": func() string { return strings.Repeat("[", 50_000) + strings.Repeat("]", 50_000) },
	"deep sequences, 400 KB": func() string { return strings.Repeat("[", 200_000) + strings.Repeat("]", 200_000) },
	"deep mappings, 100 KB":  func() string { return strings.Repeat("{a: ", 25_000) + "1" + strings.Repeat("}", 25_000) },
	"deep block mappings":    deepBlock,
	"billion laughs": func() string {
		var b strings.Builder
		b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
		prev := "a"
		for i := 0; i < 9; i++ {
			n := fmt.Sprintf("l%d", i)
			fmt.Fprintf(&b, "%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
			prev = n
		}
		b.WriteString("agent:\n  backend: {type: sim, model: x, system_message: *" + prev + "}\n")
		return b.String()
	},
	"billion laughs in mapping merges": func() string {
		var b strings.Builder
		b.WriteString("m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n")
		for i := 1; i < 12; i++ {
			fmt.Fprintf(&b, "m%d: &m%d [*m%[3]d, *m%[3]d, *m%[3]d, *m%[3]d, *m%[3]d, *m%[3]d, *m%[3]d, *m%[3]d, *m%[3]d, *m%[3]d]\n", i, i, i-1)
		}
		b.WriteString("agent: {backend: {type: sim}}\nx: *m11\n")
		return b.String()
	},
	"a 60 MB config file": func() string { return "agent: {backend: {type: sim}}\n# " + strings.Repeat("x", 60<<20) + "\n" },
}

func deepBlock() string {
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		b.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	return b.String()
}

const (
	bombTime = 10 * time.Second
	bombRSS  = 512 << 10 // KiB
)

func TestConfigBombs(t *testing.T) {
	for name, mk := range bombs {
		for _, how := range []string{"config validate", "a run"} {
			attempt(t, how+": "+name, func(t *testing.T) {
				t.Parallel()
				dir := tempDir(t)
				must(t, os.WriteFile(filepath.Join(dir, "bomb.yaml"), []byte(mk()), 0o644))
				args := []string{"config", "validate", "bomb.yaml"}
				if how == "a run" {
					args = []string{"--display", "plain", "--no-logs", "--config", "bomb.yaml", "q"}
				}
				r := massgen(t, dir, runOpts{timeout: 60 * time.Second}, args...)
				t.Logf("exit %d in %s, max RSS %d MiB; stderr: %s", r.code, r.dur.Round(time.Millisecond), r.maxRSSKiB>>10, tail(r.stderr, 300))
				if r.code == 0 {
					t.Errorf("the bomb was accepted")
				}
				if r.dur > bombTime || r.timedOut {
					t.Errorf("took %s (limit %s)", r.dur, bombTime)
				}
				if r.maxRSSKiB > bombRSS {
					t.Errorf("used %d MiB (limit %d MiB)", r.maxRSSKiB>>10, bombRSS>>10)
				}
				if len(r.stderr) > 64<<10 {
					t.Errorf("the error is %d bytes long", len(r.stderr))
				}
			})
		}
	}
}
