package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The start-up benchmark: how long massgen takes to start and do a short
// command, against /bin/true measured in the same run (DESIGN.md §3a,
// "Weight": start-up ≤ 10 ms). It reports and never fails: a loaded
// machine makes both slower, and the ratio says how much massgen adds.
//
//	go test -run '^$' -bench StartUp ./cmd/massgen/
//
// Each iteration runs /bin/true and then massgen, so that both see the
// same load; the metrics are each one's mean wall time and massgen's
// excess over true.

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// binary builds the massgen command once per test binary.
func binary(b testing.TB) string {
	b.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "massgen-startup-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "massgen")
		// As scripts/build builds it: static and stripped, the binary a
		// user runs (a dynamic one pays for the loader, symbols for pages).
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", built.bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			built.err = &buildError{err, out}
		}
	})
	if built.err != nil {
		b.Fatal(built.err)
	}
	return built.bin
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func BenchmarkStartUp(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true(1) to compare with")
	}
	example, err := filepath.Abs("../../examples/sim_three_agents.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"version", []string{"--version"}},
		// Reads and validates a config: no TUI, no provider, no network.
		{"config-validate", []string{"config", "validate", example}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bin := binary(b)
			run := func(path string, args ...string) time.Duration {
				cmd := exec.Command(path, args...)
				cmd.Env = append(os.Environ(), "NO_COLOR=1")
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%s %s: %v\n%s", path, strings.Join(args, " "), err, out)
				}
				return time.Since(start)
			}
			run(bin, bc.args...) // the page cache, not the first iteration, pays for reading the binary
			var base, mg time.Duration
			b.ResetTimer()
			for range b.N {
				base += run(truePath)
				mg += run(bin, bc.args...)
			}
			n := float64(b.N)
			b.ReportMetric(0, "ns/op") // both programs are in the loop: ns/op would mean neither
			b.ReportMetric(mg.Seconds()*1e3/n, "massgen-ms/op")
			b.ReportMetric(base.Seconds()*1e3/n, "true-ms/op")
			b.ReportMetric((mg-base).Seconds()*1e3/n, "excess-ms/op")
			b.ReportMetric(mg.Seconds()/max(base.Seconds(), 1e-9), "x-true")
		})
	}
}

// What massgen's own packages may do at init, in allocations and bytes: a
// few tables and small maps. Anything more (a regular expression compiled
// at package level, a registry built eagerly) is paid by every process,
// massgen --version included, and belongs in a sync.OnceValue.
const (
	ownInitAllocs = 200
	ownInitBytes  = 64 << 10
)

// TestOwnPackagesInitLittle runs massgen --version with
// GODEBUG=inittrace=1 and holds each github.com/massgen/massgen package's
// init to ownInitAllocs allocations and ownInitBytes bytes. Allocation
// counts do not depend on the machine's load, so this is not a timed
// test; BenchmarkStartUp gives the time.
func TestOwnPackagesInitLittle(t *testing.T) {
	seen := 0
	for _, p := range initTrace(t) {
		if !strings.HasPrefix(p.name, "github.com/massgen/massgen/") {
			continue
		}
		seen++
		if p.allocs > ownInitAllocs || p.bytes > ownInitBytes {
			t.Errorf("%s: init makes %d allocations, %d bytes (at most %d, %d): compile or build it on first use", p.name, p.allocs, p.bytes, ownInitAllocs, ownInitBytes)
		}
	}
	if seen < 10 {
		t.Fatalf("the init trace names %d of massgen's packages; expected every one the command links", seen)
	}
}

// What every package linked into massgen may do at init together, in
// bytes: 1.87 MB when this was set (2.71 MB before cloud.google.com/go/auth
// stopped linking OpenCensus). A dependency that brings much more (a
// tracing library, a protobuf registry, regular expressions compiled at
// package level) fails here, counted rather than timed, and the message
// names the heaviest packages so the change that brought them is found.
const allInitBytes = 2 << 20

// TestInitOfAllPackagesStaysSmall holds the sum of every linked
// package's init — the SDKs', the runtime's and massgen's — to
// allInitBytes bytes, from massgen --version's GODEBUG=inittrace=1.
func TestInitOfAllPackagesStaysSmall(t *testing.T) {
	pkgs := initTrace(t)
	total := 0
	for _, p := range pkgs {
		total += p.bytes
	}
	if len(pkgs) < 100 {
		t.Fatalf("the init trace names %d packages; expected every one the command links", len(pkgs))
	}
	t.Logf("%d packages initialise %d bytes at start-up", len(pkgs), total)
	if total > allInitBytes {
		slices.SortFunc(pkgs, func(a, b initCost) int { return b.bytes - a.bytes })
		var top []string
		for _, p := range pkgs[:min(10, len(pkgs))] {
			top = append(top, fmt.Sprintf("  %8d %s", p.bytes, p.name))
		}
		t.Errorf("package init allocates %d bytes (at most %d): every command pays for it before main; the heaviest:\n%s", total, allInitBytes, strings.Join(top, "\n"))
	}
}

// initCost is one package's line of the init trace.
type initCost struct {
	name          string
	bytes, allocs int
}

// initTrace runs massgen --version with GODEBUG=inittrace=1 and reads what
// each linked package's init allocated.
func initTrace(t *testing.T) []initCost {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command")
	}
	cmd := exec.Command(binary(t), "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("massgen --version: %v\n%s%s", err, out, stderr.Bytes())
	}
	var out []initCost
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init github.com/massgen/massgen/internal/config @3.1 ms, 0.27 ms clock, 95000 bytes, 1000 allocs
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" {
			continue
		}
		nbytes, err1 := strconv.Atoi(f[7])
		allocs, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("cannot read the init trace line %q", sc.Text())
		}
		out = append(out, initCost{f[1], nbytes, allocs})
	}
	if len(out) == 0 {
		t.Fatalf("massgen --version printed no init trace; it is not the format this test reads:\n%s", firstLines(stderr.String(), 5))
	}
	return out
}

// TestNoRegexpCompiledAtPackageLevel reads massgen's own sources: a
// package-level variable initialised with regexp.MustCompile (or
// Compile) is compiled by every process before main, used or not. The
// init test above counts allocations and lets a small one through; this
// one names the line.
func TestNoRegexpCompiledAtPackageLevel(t *testing.T) {
	// The packages linked into massgen, with their files for this platform.
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if eq .Module.Path "github.com/massgen/massgen"}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{end}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, name := range fields[1:] {
			path := filepath.Join(fields[0], name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files++
			for _, decl := range f.Decls {
				if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.VAR {
					for _, pos := range regexpCompiles(gen) {
						p := fset.Position(pos)
						rel, _ := filepath.Rel(root, p.Filename)
						t.Errorf("%s:%d: a regular expression compiled at package level runs at every start; wrap it in sync.OnceValue", rel, p.Line)
					}
				}
			}
		}
	}
	if files < 100 {
		t.Fatalf("read %d of massgen's Go files; expected every package the command links", files)
	}
}

// regexpCompiles gives where n calls regexp.Compile, MustCompile or their
// POSIX forms outside a function literal (which runs when called, not at
// init).
func regexpCompiles(n ast.Node) []token.Pos {
	var at []token.Pos
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "regexp" && strings.Contains(sel.Sel.Name, "Compile") {
					at = append(at, n.Pos())
				}
			}
		}
		return true
	})
	return at
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return fmt.Sprint(strings.Join(lines[:min(n, len(lines))], "\n"))
}
