//go:build linux

package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

const secret = "BEGIN OPENSSH PRIVATE KEY host-secret-4f2a"

// hostSecret is a 0700 directory outside the trees holding id_rsa.
func hostSecret(t *testing.T) (dir string, state string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "ssh")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "id_rsa"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, treeState(t, dir)
}

// treeState describes a tree (names, modes, contents) to tell whether
// anything in it changed.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", p, err)
			return nil
		}
		info, _ := d.Info()
		fmt.Fprintf(&b, "%s %v", p, info.Mode())
		if info.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

// leaked greps the whole tree under dir, by lstat, for the secret and for
// any symbolic link.
func leaked(t *testing.T, dir string) []string {
	t.Helper()
	var bad []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if strings.Contains(d.Name(), "id_rsa") {
			bad = append(bad, "name "+p)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			bad = append(bad, "symlink "+p)
		case d.Type().IsRegular():
			if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(secret)) {
				bad = append(bad, "secret in "+p)
			}
		}
		return nil
	})
	return bad
}

// bigSource is a workspace of dirs×files small files, the last directory
// being zz/.
func bigSource(t testing.TB, dirs, files int) string {
	src := filepath.Join(t.TempDir(), "ws")
	for d := range dirs {
		name := fmt.Sprintf("d%03d", d)
		if d == dirs-1 {
			name = "zz"
		}
		dir := filepath.Join(src, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range files {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return src
}

// swapper swaps dir for a symbolic link to target, and back, until stopped.
func swapper(t *testing.T, dir, target string) (stop func() int) {
	var done atomic.Bool
	var wg sync.WaitGroup
	swaps := 0
	wg.Go(func() {
		aside := dir + ".real"
		for !done.Load() {
			if os.Rename(dir, aside) != nil {
				continue
			}
			if os.Symlink(target, dir) == nil {
				swaps++
				runtime.Gosched()
				os.Remove(dir)
			}
			os.Rename(aside, dir)
		}
	})
	return func() int {
		done.Store(true)
		wg.Wait()
		return swaps
	}
}

// Finding 2 of issue 17: a process that outlives its tool call swaps zz/
// for a link to a 0700 host directory while thousands of files are
// copied. No copy mode may carry the host's file into the copy, and
// nothing outside may change.
func TestCopyTreeRacingSymlinkSwap(t *testing.T) {
	outside, before := hostSecret(t)
	src := bigSource(t, 60, 100) // 6,000 files
	// A snapshot (Link mode's source) is a tree nobody else changes, but
	// the walk is the same: race every mode.
	stop := swapper(t, filepath.Join(src, "zz"), outside)
	out := t.TempDir()
	rounds := 0
	for i := range 3 {
		for _, mode := range []CopyMode{Clone, Link, Plain} {
			dst := filepath.Join(out, fmt.Sprintf("%d_%d", i, mode))
			st, err := CopyTree(src, dst, mode, 0)
			if err != nil {
				t.Fatalf("mode %d: %v", mode, err)
			}
			if st.Files < 5900 || st.Files > 6000 {
				t.Errorf("mode %d: %d files copied", mode, st.Files)
			}
			rounds++
		}
	}
	swaps := stop()
	if bad := leaked(t, out); len(bad) > 0 {
		t.Fatalf("after %d swaps in %d copies, the copies hold: %q", swaps, rounds, bad[:min(len(bad), 10)])
	}
	if after := treeState(t, outside); after != before {
		t.Errorf("the outside changed:\n%s\nwas\n%s", after, before)
	}
	if swaps == 0 {
		t.Fatal("the swapper never swapped")
	}
	t.Logf("%d swaps during %d copies", swaps, rounds)
}

// WalkTree, which fingerprints context paths, is not led out either.
func TestWalkTreeRacingSymlinkSwap(t *testing.T) {
	outside, before := hostSecret(t)
	src := bigSource(t, 30, 100)
	stop := swapper(t, filepath.Join(src, "zz"), outside)
	var found []string
	for range 20 {
		err := WalkTree(src, func(rel string, e *TreeEntry) error {
			if strings.Contains(rel, "id_rsa") {
				found = append(found, rel)
			}
			if e.Mode.IsRegular() {
				f, err := e.Open()
				if err != nil {
					return nil
				}
				data, _ := io.ReadAll(f)
				f.Close()
				if bytes.Contains(data, []byte(secret)) {
					found = append(found, "content of "+rel)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if swaps := stop(); swaps == 0 {
		t.Fatal("the swapper never swapped")
	}
	if len(found) > 0 {
		t.Fatalf("the walk reached the outside: %q", found)
	}
	if after := treeState(t, outside); after != before {
		t.Errorf("the outside changed")
	}
}

// A link planted in the destination while the copy builds it cannot
// redirect a write: the copy fails there or goes on beside it, and the
// place the link points to stays as it was.
func TestCopyTreeDestinationPlantedLinks(t *testing.T) {
	src := bigSource(t, 40, 50)
	target := filepath.Join(t.TempDir(), "host")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	before := treeState(t, target)
	out := t.TempDir()
	for i := range 10 {
		dst := filepath.Join(out, fmt.Sprint(i))
		var done atomic.Bool
		var wg sync.WaitGroup
		wg.Go(func() {
			for n := 0; !done.Load(); n++ {
				d := fmt.Sprintf("d%03d", n%40)
				os.Symlink(target, filepath.Join(dst, d))
				// into a directory the copy made (not through this goroutine's own link)
				if fi, err := os.Lstat(filepath.Join(dst, d)); err == nil && fi.IsDir() {
					os.Symlink(filepath.Join(target, "f.txt"), filepath.Join(dst, d, fmt.Sprintf("f%03d.txt", n%50)))
				}
			}
		})
		CopyTree(src, dst, Plain, 0) // an error is fine; a write outside is not
		done.Store(true)
		wg.Wait()
	}
	if after := treeState(t, target); after != before {
		t.Errorf("a write went through a planted link:\n%s", after)
	}
}

// The type of what is in a tree, as WalkTree reports it: links described
// (their target) and never followed, modes as they are.
func TestWalkTree(t *testing.T) {
	outside, _ := hostSecret(t)
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "sub", ".git", "hooks"), 0o755))
	must(os.WriteFile(filepath.Join(src, "sub", ".git", "hooks", "post-checkout"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(filepath.Join(src, ".hidden"), []byte("h"), 0o600))
	must(os.Symlink(outside, filepath.Join(src, "ssh")))
	must(unix.Mkfifo(filepath.Join(src, "fifo"), 0o644))
	got := map[string]string{}
	must(WalkTree(src, func(rel string, e *TreeEntry) error {
		got[rel] = fmt.Sprintf("%v %s", e.Mode, e.Target)
		return nil
	}))
	want := map[string]string{
		".hidden": "-rw------- ", "fifo": "prw-r--r-- ", "ssh": "Lrwxrwxrwx " + outside,
		"sub": "drwxr-xr-x ", filepath.Join("sub", ".git"): "drwxr-xr-x ", filepath.Join("sub", ".git", "hooks"): "drwxr-xr-x ",
		filepath.Join("sub", ".git", "hooks", "post-checkout"): "-rwxr-xr-x ",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("walk\n%v\nwant\n%v", got, want)
	}
	// SkipDir leaves a directory's contents out; SkipAll ends the walk.
	var seen []string
	must(WalkTree(src, func(rel string, e *TreeEntry) error {
		seen = append(seen, rel)
		if rel == "sub" {
			return fs.SkipDir
		}
		return nil
	}))
	if fmt.Sprint(seen) != "[.hidden fifo ssh sub]" {
		t.Errorf("with SkipDir: %v", seen)
	}
	if err := WalkTree(src, func(string, *TreeEntry) error { return fs.SkipAll }); err != nil {
		t.Errorf("SkipAll: %v", err)
	}
	// The root itself must not be a link.
	link := filepath.Join(t.TempDir(), "l")
	must(os.Symlink(src, link))
	if err := WalkTree(link, func(string, *TreeEntry) error { return nil }); !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("walking a link: %v", err)
	}
	if _, err := CopyTree(link, filepath.Join(t.TempDir(), "c"), Plain, 0); err == nil {
		t.Errorf("copying through a link: no error")
	}
}

// A mount inside the source, a bind mount of the same file system (same
// device number) or another file system, is neither copied nor walked
// into. The mounts are made in a mount namespace of this test's own
// thread, so nothing is left mounted on the machine whatever happens.
func TestCopyTreeSkipsMounts(t *testing.T) {
	outside, _ := hostSecret(t)
	src := bigSource(t, 3, 3)
	bind, tmpfs := filepath.Join(src, "bind"), filepath.Join(src, "tmpfs")
	for _, d := range []string{bind, tmpfs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread, with its namespace, ends with the goroutine.
		runtime.LockOSThread()
		errc <- func() error {
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("skip: unshare: %w", err)
			}
			if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
				return fmt.Errorf("skip: private mounts: %w", err)
			}
			if err := unix.Mount(outside, bind, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("skip: bind mount: %w", err)
			}
			if err := unix.Mount("tmpfs", tmpfs, "tmpfs", 0, "size=1m"); err != nil {
				return fmt.Errorf("skip: tmpfs: %w", err)
			}
			if err := os.WriteFile(filepath.Join(tmpfs, "other-fs.txt"), []byte(secret), 0o644); err != nil {
				return err
			}
			for _, mode := range []CopyMode{Clone, Link, Plain} {
				dst := filepath.Join(out, fmt.Sprint(mode))
				st, err := CopyTree(src, dst, mode, 0)
				if err != nil {
					return fmt.Errorf("mode %d: %w", mode, err)
				}
				if st.Files != 9 || st.Skipped != 2 {
					return fmt.Errorf("mode %d: %+v, want 9 files and 2 mount points skipped", mode, st)
				}
				if bad := leaked(t, dst); len(bad) > 0 {
					return fmt.Errorf("mode %d: the copy holds %q", mode, bad)
				}
			}
			mounts := map[string]bool{}
			err := WalkTree(src, func(rel string, e *TreeEntry) error {
				if strings.HasPrefix(rel, "bind"+string(filepath.Separator)) || strings.HasPrefix(rel, "tmpfs"+string(filepath.Separator)) {
					return fmt.Errorf("walked into the mount: %s", rel)
				}
				mounts[rel] = e.Mount
				return nil
			})
			if err != nil {
				return err
			}
			if !mounts["bind"] || !mounts["tmpfs"] || mounts["zz"] {
				return fmt.Errorf("mount points as walked: %v", mounts)
			}
			return nil
		}()
	}()
	if err := <-errc; err != nil {
		if msg := err.Error(); strings.HasPrefix(msg, "skip: ") {
			t.Skip(msg)
		}
		t.Fatal(err)
	}
}

// Deeper than maxDepth directories, a copy stops with an error rather than
// run out of descriptors.
func TestCopyTreeTooDeep(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, strings.Repeat("d"+string(filepath.Separator), maxDepth+2)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := CopyTree(src, filepath.Join(t.TempDir(), "c"), Plain, 0); !errors.Is(err, errTooDeep) {
		t.Errorf("copying a deep tree: %v", err)
	}
	if _, err := CopyTree(filepath.Join(src, "d", "d", "d"), filepath.Join(t.TempDir(), "c"), Plain, 0); err != nil {
		t.Errorf("copying %d levels: %v", maxDepth-1, err)
	}
}
