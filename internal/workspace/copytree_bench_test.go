package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkSnapshot10kFiles copies a workspace of 10,000 small files (100
// directories of 100 files of 1 KiB) the three ways CopyTree can, in the
// same benchmark, and reports each one's cost and the ratios against a
// plain copy: Link is how a snapshot is fanned out to each agent's view
// and to the logs, Clone how the snapshot itself is taken (a reflink where
// the file system has them; on ext4 or tmpfs it falls back to a copy).
//
//	go test -run '^$' -bench Snapshot10kFiles -benchtime 1x ./internal/workspace/
func BenchmarkSnapshot10kFiles(b *testing.B) {
	src := filepath.Join(b.TempDir(), "ws")
	data := make([]byte, 1024)
	for d := range 100 {
		dir := filepath.Join(src, fmt.Sprintf("d%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", f)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	out := b.TempDir()
	var sum [3]time.Duration
	var cloned int
	for i := range b.N {
		for m, mode := range []CopyMode{Plain, Link, Clone} {
			dst := filepath.Join(out, fmt.Sprintf("%d_%d", i, m))
			start := time.Now()
			st, err := CopyTree(src, dst, mode, 0)
			sum[m] += time.Since(start)
			if err != nil || st.Files != 10_000 {
				b.Fatalf("mode %d: %v, %+v", mode, err, st)
			}
			if mode == Clone {
				cloned = st.Cloned
			}
			b.StopTimer()
			os.RemoveAll(dst)
			b.StartTimer()
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(sum[0].Milliseconds())/n, "copy_ms")
	b.ReportMetric(float64(sum[1].Milliseconds())/n, "link_ms")
	b.ReportMetric(float64(sum[2].Milliseconds())/n, "clone_ms")
	b.ReportMetric(float64(sum[1])/float64(sum[0]), "link/copy")
	b.ReportMetric(float64(sum[2])/float64(sum[0]), "clone/copy")
	b.ReportMetric(float64(cloned), "files_reflinked")
}
