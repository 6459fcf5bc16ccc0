package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A probe that times out is not a verdict: the next call probes again and
// can succeed; a probe that ran and failed is remembered.
func TestASlowBwrapProbeIsNotRemembered(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "bwrap")
	slow := filepath.Join(dir, "slow")
	// Slow while the file slow exists (the test removes it after the first
	// probe): what a moment of heavy load does to the real one.
	script := "#!/bin/sh\nif [ -e " + slow + " ]; then exec sleep 60; fi\nexit 0\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(slow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	setTimeout := func(d time.Duration) time.Duration {
		bwrapProbe.Lock() // findBwrap reads it under this lock
		defer bwrapProbe.Unlock()
		old := bwrapProbeTimeout
		bwrapProbeTimeout = d
		return old
	}
	defer setTimeout(setTimeout(5 * time.Second))
	if _, err := findBwrap(fake); err == nil {
		t.Fatal("a probe cut short by its timeout passed")
	}
	if err := os.Remove(slow); err != nil {
		t.Fatal(err)
	}
	if p, err := findBwrap(fake); err != nil || p != fake {
		t.Fatalf("the second probe: %q, %v; want it to run again and pass", p, err)
	}
	failing := filepath.Join(dir, "bwrap-broken")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho no user namespaces >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := findBwrap(failing); err == nil {
		t.Fatal("a failing bubblewrap passed its probe")
	}
	os.WriteFile(failing, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	if _, err := findBwrap(failing); err == nil {
		t.Error("a probe that ran and failed was not remembered")
	}
}
