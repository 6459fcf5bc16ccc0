// Package kitfile reads the markdown files of the agents' working kit
// (memories, skills) from directories an agent or an earlier run wrote:
// through an os.Root, so no symbolic link or `..` leads out of the
// directory, regular files only and bounded in size; and it parses their
// YAML front matter. It never writes: writes go through the Guard
// (internal/workspace).
package kitfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
)

// MaxFile bounds one file read; MaxFiles the files of one directory.
const (
	MaxFile  = 256 << 10
	MaxFiles = 500
)

// File is one regular file read from a directory.
type File struct {
	Name string
	Data []byte
}

// ErrNotRegular refuses a name that is a symbolic link, a device or a
// directory where a file is expected.
var ErrNotRegular = errors.New("not a regular file")

// Read reads rel (slash-separated, inside dir) if it is a regular file of
// at most MaxFile bytes. A symbolic link is refused, wherever it points.
func Read(dir, rel string) ([]byte, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readIn(r, rel)
}

func readIn(r *os.Root, rel string) ([]byte, error) {
	fi, err := r.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", rel, ErrNotRegular)
	}
	if fi.Size() > MaxFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", rel, MaxFile)
	}
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Checked again on the open file: it may have been swapped since.
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", rel, ErrNotRegular)
	}
	return io.ReadAll(io.LimitReader(f, MaxFile))
}

// Dir reads the regular files of sub (inside dir) whose names end with
// suffix, sorted by name; links and subdirectories are skipped. A missing
// directory is no files.
func Dir(dir, sub, suffix string) ([]File, error) {
	r, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if fi, err := r.Lstat(sub); err != nil || !fi.IsDir() {
		return nil, nil // absent, or a link to a directory elsewhere
	}
	d, err := r.Open(sub)
	if err != nil {
		return nil, err
	}
	ents, err := d.ReadDir(MaxFiles)
	d.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var out []File
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		b, err := readIn(r, sub+"/"+e.Name())
		if err != nil {
			continue // swapped or grown since the listing: left out
		}
		out = append(out, File{Name: e.Name(), Data: b})
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// FrontMatter splits a markdown file into its YAML front matter (the
// block between the first two `---` lines) and its body. Without front
// matter, or with front matter that is not a YAML map, meta is empty and
// body is the whole text.
func FrontMatter(b []byte) (meta map[string]any, body string) {
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return map[string]any{}, s
	}
	end := strings.Index(s[4:], "\n---")
	if end < 0 {
		return map[string]any{}, s
	}
	head, rest := s[4:4+end], s[4+end+4:]
	rest = strings.TrimPrefix(rest, "\n")
	meta = map[string]any{}
	if err := yaml.NewDecoder(bytes.NewReader([]byte(head))).Decode(&meta); err != nil {
		return map[string]any{}, s
	}
	return meta, rest
}

// String is a front matter value as one line of text ("" when absent).
func String(meta map[string]any, key string) string {
	v, ok := meta[key]
	if !ok || v == nil {
		return ""
	}
	return strings.Join(strings.Fields(fmt.Sprint(v)), " ")
}
