// Package examples embeds the example configs shipped with massgen, so that
// `--config @examples/NAME` works from the single binary anywhere.
package examples

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names lists the examples, without the .yaml extension.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// Find returns the example called name (with or without .yaml), or else the
// first whose name contains it, as MassGen resolves @examples/NAME.
func Find(name string) (file string, data []byte, ok bool) {
	name = strings.TrimSuffix(path.Base(name), ".yaml")
	names := Names()
	for _, n := range names {
		if n == name {
			return read(n)
		}
	}
	for _, n := range names {
		if strings.Contains(n, name) {
			return read(n)
		}
	}
	return "", nil, false
}

func read(n string) (string, []byte, bool) {
	data, err := files.ReadFile(n + ".yaml")
	return n + ".yaml", data, err == nil
}
