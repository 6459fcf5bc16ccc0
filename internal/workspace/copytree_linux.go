//go:build linux

package workspace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// openEntry opens name, one component of the directory dirfd, never
// through a symbolic link (ELOOP) and never across a mount point, a bind
// mount of the same file system included (EXDEV).
func openEntry(dirfd int, name string, flags int) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_XDEV,
	}
	for range 16 {
		fd, err := unix.Openat2(dirfd, name, &how)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
	return -1, unix.EAGAIN
}

// openTreeRoot opens the root of a walk as a directory, not through a
// symbolic link in its last component. The path up to it is the caller's
// (massgen's own directories, a context path resolved at start).
func openTreeRoot(root string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, st, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, st, &fs.PathError{Op: "stat", Path: root, Err: err}
	}
	return fd, st, nil
}

// gone are the errors of an entry that is no longer what was listed: a
// link or a mount now (ELOOP, EXDEV), another type (ENOTDIR, EISDIR), a
// socket (ENXIO), or nothing at all.
func gone(err error) bool {
	switch err {
	case unix.ELOOP, unix.EXDEV, unix.ENOTDIR, unix.EISDIR, unix.ENXIO, unix.ENOENT:
		return true
	}
	return false
}

type dirent struct {
	name string
	typ  uint8
}

// readDirents lists the directory open as fd, from the descriptor
// (getdents64), sorted by name, without . and ..; buf is scratch space.
func readDirents(fd int, buf []byte) ([]dirent, error) {
	var out []dirent
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, errors.New("malformed directory entry")
			}
			typ, name := b[18], b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if s := string(name); s != "." && s != ".." {
				out = append(out, dirent{s, typ})
			}
		}
	}
	slices.SortFunc(out, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// entryType is the S_IFMT type of name in dirfd: the listed one, or an
// lstat's when the file system does not list types.
func entryType(dirfd int, e dirent) uint32 {
	switch e.typ {
	case unix.DT_DIR:
		return unix.S_IFDIR
	case unix.DT_REG:
		return unix.S_IFREG
	case unix.DT_UNKNOWN:
		var st unix.Stat_t
		if unix.Fstatat(dirfd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return st.Mode & unix.S_IFMT
		}
	}
	return 0 // a link, a device, a socket, a pipe: left out
}

func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + string(filepath.Separator) + name
}

type copier struct {
	CopyOptions
	src  string
	dev  uint64
	st   CopyStats
	ents []byte // getdents scratch
	data []byte // read/write scratch, when copy_file_range cannot
}

// CopyTreeWith is CopyTree with options.
func CopyTreeWith(src, dst string, o CopyOptions) (CopyStats, error) {
	sfd, sst, err := openTreeRoot(src)
	if err != nil {
		return CopyStats{}, err
	}
	defer unix.Close(sfd)
	// The destination's parent is the caller's directory; the destination
	// is made new in it and opened without following anything.
	parent := filepath.Dir(dst)
	pfd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return CopyStats{}, &fs.PathError{Op: "open", Path: parent, Err: err}
	}
	defer unix.Close(pfd)
	base := filepath.Base(dst)
	if err := unix.Mkdirat(pfd, base, 0o755); err != nil {
		return CopyStats{}, &fs.PathError{Op: "mkdir", Path: dst, Err: err}
	}
	dfd, err := openEntry(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return CopyStats{}, &fs.PathError{Op: "open", Path: dst, Err: err}
	}
	defer unix.Close(dfd)
	c := &copier{CopyOptions: o, src: src, dev: uint64(sst.Dev), ents: make([]byte, 16<<10)}
	err = c.dir(sfd, dfd, "", 0)
	return c.st, err
}

func (c *copier) fail(op, rel string, err error) error {
	return &fs.PathError{Op: op, Path: filepath.Join(c.src, rel), Err: err}
}

// dir copies the entries of the source directory sfd into dfd.
func (c *copier) dir(sfd, dfd int, rel string, depth int) error {
	ents, err := readDirents(sfd, c.ents)
	if err != nil {
		return c.fail("readdir", rel, err)
	}
	for _, e := range ents {
		r := join(rel, e.name)
		var err error
		switch entryType(sfd, e) {
		case unix.S_IFDIR:
			if c.Skip != nil && c.Skip(r, true) {
				continue
			}
			err = c.subdir(sfd, dfd, e.name, r, depth+1)
		case unix.S_IFREG:
			if c.Skip != nil && c.Skip(r, false) {
				continue
			}
			err = c.file(sfd, dfd, e.name, r)
		default:
			c.st.Skipped++
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *copier) subdir(sfd, dfd int, name, rel string, depth int) error {
	fd, err := openEntry(sfd, name, unix.O_RDONLY|unix.O_DIRECTORY)
	if gone(err) {
		c.st.Skipped++ // swapped for a link, or a mount point: not followed
		return nil
	}
	if err != nil {
		return c.fail("open", rel, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return c.fail("stat", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || uint64(st.Dev) != c.dev {
		c.st.Skipped++
		return nil
	}
	if depth > maxDepth {
		return c.fail("copy", rel, errTooDeep)
	}
	if err := unix.Mkdirat(dfd, name, 0o755); err != nil {
		return c.fail("mkdir", rel, err)
	}
	nfd, err := openEntry(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return c.fail("open the copy of", rel, err)
	}
	defer unix.Close(nfd)
	return c.dir(fd, nfd, rel, depth)
}

// over counts size against the limit.
func (c *copier) over(size int64, rel string) error {
	if c.st.Bytes += size; c.Limit > 0 && c.st.Bytes > c.Limit {
		return fmt.Errorf("%s holds more than %d bytes: %w", c.src, c.Limit, ErrTooLarge)
	}
	return nil
}

func (c *copier) file(sfd, dfd int, name, rel string) error {
	if c.Mode == Link {
		// linkat does not follow a link in name, nor cross a mount (EXDEV);
		// what it linked is checked afterwards, so an entry swapped for a
		// symbolic link meanwhile is taken out again.
		err := unix.Linkat(sfd, name, dfd, name, 0)
		if err == nil {
			var st unix.Stat_t
			if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return c.fail("stat the copy of", rel, err)
			}
			if st.Mode&unix.S_IFMT != unix.S_IFREG || uint64(st.Dev) != c.dev {
				c.st.Skipped++
				return unlinkCopy(dfd, name, c, rel)
			}
			if err := c.over(st.Size, rel); err != nil {
				unlinkCopy(dfd, name, c, rel)
				return err
			}
			c.st.Files++
			c.st.Linked++
			return nil
		}
		if err == unix.ENOENT {
			c.st.Skipped++
			return nil
		}
		// Another file system, too many links, protected_hardlinks: copy.
	}
	in, err := openEntry(sfd, name, unix.O_RDONLY|unix.O_NONBLOCK)
	if gone(err) {
		c.st.Skipped++
		return nil
	}
	if err != nil {
		return c.fail("open", rel, err)
	}
	defer unix.Close(in)
	var st unix.Stat_t
	if err := unix.Fstat(in, &st); err != nil {
		return c.fail("stat", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || uint64(st.Dev) != c.dev {
		c.st.Skipped++ // a pipe or a directory now, or a file bind-mounted there
		return nil
	}
	if err := c.over(st.Size, rel); err != nil {
		return err
	}
	c.st.Files++
	out, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, st.Mode&0o777)
	if err != nil {
		return c.fail("create the copy of", rel, err)
	}
	if c.Mode == Clone && unix.IoctlFileClone(out, in) == nil {
		c.st.Cloned++
		return closeCopy(out, c, rel)
	}
	if err := c.copyData(out, in, st.Size); err != nil {
		unix.Close(out)
		return c.fail("copy", rel, err)
	}
	return closeCopy(out, c, rel)
}

func unlinkCopy(dfd int, name string, c *copier, rel string) error {
	if err := unix.Unlinkat(dfd, name, 0); err != nil {
		return c.fail("remove the copy of", rel, err)
	}
	return nil
}

func closeCopy(fd int, c *copier, rel string) error {
	if err := unix.Close(fd); err != nil {
		return c.fail("write the copy of", rel, err)
	}
	return nil
}

// copyData copies size bytes from in to out: in the kernel where it can
// (copy_file_range), through a buffer otherwise.
func (c *copier) copyData(out, in int, size int64) error {
	left := size
	for left > 0 {
		n, err := unix.CopyFileRange(in, nil, out, nil, int(min(left, 1<<30)), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if left == size {
				break // not supported between these two: read and write
			}
			return err
		}
		if n == 0 {
			return nil // shorter than it was: copied as it is now
		}
		left -= int64(n)
	}
	if left == 0 {
		return nil
	}
	if c.data == nil {
		c.data = make([]byte, 128<<10)
	}
	for left > 0 {
		n, err := unix.Read(in, c.data[:min(left, int64(len(c.data)))])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		for b := c.data[:n]; len(b) > 0; {
			m, err := unix.Write(out, b)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			b = b[m:]
		}
		left -= int64(n)
	}
	return nil
}

// WalkTree calls fn for every entry under root (root itself left out),
// a directory before what it holds, each directory's entries sorted by
// name. It walks by directory descriptors as CopyTree does: a directory
// is entered from its already-open parent, never through a symbolic link
// nor across a mount (TreeEntry.Mount), so swapping a directory for a link
// while the walk runs cannot lead it elsewhere. fn returning fs.SkipDir
// for a directory leaves its contents out; fs.SkipAll ends the walk
// without an error; any other error ends it with that error. Entries
// vanishing meanwhile are left out.
func WalkTree(root string, fn func(rel string, e *TreeEntry) error) error {
	fd, st, err := openTreeRoot(root)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	w := &walker{root: root, dev: uint64(st.Dev), fn: fn, ents: make([]byte, 16<<10), link: make([]byte, 4096)}
	if err := w.dir(fd, "", 0); err != nil && err != fs.SkipAll {
		return err
	}
	return nil
}

type walker struct {
	root       string
	dev        uint64
	fn         func(string, *TreeEntry) error
	ents, link []byte
}

func (w *walker) dir(fd int, rel string, depth int) error {
	ents, err := readDirents(fd, w.ents)
	if err != nil {
		return &fs.PathError{Op: "readdir", Path: filepath.Join(w.root, rel), Err: err}
	}
	for _, d := range ents {
		r := join(rel, d.name)
		var st unix.Stat_t
		if err := unix.Fstatat(fd, d.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				continue
			}
			return &fs.PathError{Op: "lstat", Path: filepath.Join(w.root, r), Err: err}
		}
		e := TreeEntry{Mode: fileMode(st.Mode), Size: st.Size, ModTime: time.Unix(st.Mtim.Unix()),
			Mount: uint64(st.Dev) != w.dev, dirfd: fd, name: d.name, dev: uint64(st.Dev), ino: st.Ino}
		sub := -1
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			if n, err := unix.Readlinkat(fd, d.name, w.link); err == nil {
				e.Target = string(w.link[:n])
			}
		case unix.S_IFDIR:
			if e.Mount {
				break
			}
			sub, err = openEntry(fd, d.name, unix.O_RDONLY|unix.O_DIRECTORY)
			if err == unix.EXDEV {
				e.Mount = true // a bind mount of the same file system
			}
			var sst unix.Stat_t
			if sub >= 0 && (unix.Fstat(sub, &sst) != nil || uint64(sst.Dev) != w.dev || sst.Ino != st.Ino) {
				unix.Close(sub) // replaced since listed: not entered
				sub = -1
			}
		}
		err := w.fn(r, &e)
		if err == nil && sub >= 0 {
			if depth+1 > maxDepth {
				err = &fs.PathError{Op: "walk", Path: filepath.Join(w.root, r), Err: errTooDeep}
			} else {
				err = w.dir(sub, r, depth+1)
			}
		}
		if sub >= 0 {
			unix.Close(sub)
		}
		if err != nil && err != fs.SkipDir {
			return err
		}
	}
	return nil
}

// Open opens a regular file WalkTree found, from its directory's
// descriptor (so only during fn), without following a link or crossing a
// mount; a file replaced since it was listed is refused.
func (e *TreeEntry) Open() (*os.File, error) {
	if !e.Mode.IsRegular() || e.name == "" {
		return nil, fs.ErrInvalid
	}
	fd, err := openEntry(e.dirfd, e.name, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || uint64(st.Dev) != e.dev || st.Ino != e.ino {
		unix.Close(fd)
		return nil, errChanged
	}
	return os.NewFile(uintptr(fd), e.name), nil
}

// fileMode is an lstat mode as fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
