// Package diskfull gives tests a file system that runs out of space: a
// real one where the test may mount it (a small tmpfs, on Linux as root),
// and a writer that fails as a full disk does where it may not.
package diskfull

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// childEnv marks a test process that Mount started in a user namespace.
const childEnv = "MASSGEN_DISKFULL_CHILD"

// Mount mounts a tmpfs of size bytes on a new directory of the test's
// and returns it; it is unmounted when the test ends. Where mounting is
// not permitted (not root), the test is run again, whole, in a child
// process with a user and mount namespace of its own, where any user may
// mount a tmpfs: Mount then returns "" once the child has passed (it fails
// the test with the child's output if the child failed), and the caller
// returns at once. Where neither works (not Linux, user namespaces
// forbidden), the test is skipped: tests that use Mount have an injected
// twin that always runs.
func Mount(t testing.TB, size int) string {
	t.Helper()
	return MountWith(t, fmt.Sprintf("size=%d", size))
}

// MountWith is Mount with the tmpfs's options: "size=65536",
// "nr_inodes=1" (a disk where no file can be created)…
func MountWith(t testing.TB, options string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "full")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := mount(dir, options)
	if err != nil && os.Getenv(childEnv) == "" && os.Getenv(forceEnv) == "" {
		if ran, cerr := runInNamespace(t); ran {
			return ""
		} else if cerr != nil {
			t.Logf("cannot run the test in a user namespace: %v", cerr)
		}
	}
	if err != nil {
		t.Skipf("cannot mount a tmpfs (%s): %v", options, err)
	}
	t.Cleanup(func() {
		if err := unmount(dir); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// forceEnv, set, makes Mount skip rather than use a namespace (for the
// test of Mount itself).
const forceEnv = "MASSGEN_DISKFULL_NO_USERNS"

// Fill writes a file in dir until the file system has no space left,
// leaving at most keep bytes free, and returns a function that frees it.
func Fill(t testing.TB, dir string, keep int64) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		avail, err := available(dir)
		if err != nil {
			t.Fatal(err)
		}
		if avail <= keep {
			break
		}
		n := min(int64(len(buf)), avail-keep)
		if _, err := f.Write(buf[:n]); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatal(err)
		}
	}
	return func() { os.Remove(path) }
}

// Space is the shared space of a simulated disk: Writers on it fail with
// ENOSPC, as a full disk does, once Limit bytes have been written in all.
type Space struct {
	mu      sync.Mutex
	Limit   int64
	written int64
}

// Take reserves up to n bytes and returns how many it got.
func (s *Space) Take(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	left := max(0, s.Limit-s.written)
	got := min(int64(n), left)
	s.written += got
	return int(got)
}

// Free gives n bytes back (a file truncated or removed).
func (s *Space) Free(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written = max(0, s.written-int64(n))
}

// Writer writes to w what space allows: a write larger than what is left
// writes what fits, then fails with ENOSPC (a short write, as write(2)
// makes on a full disk).
type Writer struct {
	W     io.Writer
	Space *Space
}

func (w Writer) Write(p []byte) (int, error) {
	n := w.Space.Take(len(p))
	m, err := w.W.Write(p[:n])
	if err == nil && m < len(p) {
		err = &os.PathError{Op: "write", Path: "diskfull", Err: syscall.ENOSPC}
	}
	return m, err
}
