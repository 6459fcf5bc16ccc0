//go:build linux

package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/workspace"
)

// BenchmarkRound measures what write_mode adds per agent round on a
// project of 500 files (2 MB): laying a fresh copy (Round) and, with 10
// files changed, the diff written beside an answer's snapshot (Annotate),
// each as a ratio to the snapshot of the same workspace that every answer
// costs anyway (workspace.CopyTree), measured in the same run:
//
//	go test -run '^$' -bench BenchmarkRound -benchtime 20x ./internal/workspace/isolate
func BenchmarkRound(b *testing.B) {
	src := b.TempDir()
	for i := range 500 {
		p := filepath.Join(src, fmt.Sprintf("pkg%02d", i%25), fmt.Sprintf("f%03d.txt", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		data := make([]byte, 4096)
		for j := range data {
			data[j] = byte('a' + (i+j)%26)
			if j%64 == 63 {
				data[j] = '\n'
			}
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, _, err := New(b.Context(), filepath.Join(b.TempDir(), "iso"), Isolated, []string{src}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ws := b.TempDir()
	if err := s.Round(ws); err != nil {
		b.Fatal(err)
	}
	tree := s.Contexts()[0].Tree(ws)
	for i := range 10 {
		p := filepath.Join(tree, fmt.Sprintf("pkg%02d", i%25), fmt.Sprintf("f%03d.txt", i))
		os.WriteFile(p, []byte("changed\n"), 0o644)
	}
	snaps := b.TempDir()
	var snapNs, roundNs, annotateNs int64
	for i := 0; b.Loop(); i++ {
		dst := filepath.Join(snaps, fmt.Sprint(i))
		t0 := now()
		if _, err := workspace.CopyTree(ws, dst, workspace.Clone, 1<<30); err != nil {
			b.Fatal(err)
		}
		t1 := now()
		if err := s.Annotate(b.Context(), dst, ws); err != nil {
			b.Fatal(err)
		}
		t2 := now()
		other := filepath.Join(b.TempDir(), "ws")
		os.Mkdir(other, 0o755)
		if err := s.Round(other); err != nil {
			b.Fatal(err)
		}
		t3 := now()
		snapNs += t1 - t0
		annotateNs += t2 - t1
		roundNs += t3 - t2
	}
	b.ReportMetric(float64(roundNs)/float64(snapNs), "round/snapshot")
	b.ReportMetric(float64(annotateNs)/float64(snapNs), "annotate/snapshot")
	b.ReportMetric(float64(snapNs)/float64(b.N)/1e6, "snapshot-ms")
}

func now() int64 { return time.Now().UnixNano() }
