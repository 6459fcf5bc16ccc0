// Package examples embeds the example configs shipped with massgen, so that
// `--config @examples/NAME` works from the single binary anywhere.
//
// Besides massgen's own (sim_three_agents, three_providers, …), the library
// holds configs written for massgen under the paths MassGen's documentation
// uses (basic/multi/three_agents_default, tools/mcp/claude_mcp_example, …),
// so the names a MassGen user types find a team that does what the name
// says, with the features massgen has.
package examples

import (
	"embed"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed *.yaml basic tools providers
var files embed.FS

// Names lists the examples by their path without the .yaml extension
// ("sim_three_agents", "basic/multi/three_agents_default"), sorted.
func Names() []string {
	var out []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			out = append(out, strings.TrimSuffix(p, ".yaml"))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// Find returns the example name designates, as MassGen resolves
// @examples/NAME, but without its first-match-wins ambiguity: the example
// at that path ("basic/multi/three_agents_default", with or without .yaml,
// also under upstream's "configs/" or "massgen/configs/" prefix); else the
// one whose path, its slashes written as underscores, is name (the short
// names upstream's --list-examples prints: "basic_multi_three_agents_default");
// else the one whose file name is name; else the first, shortest path first,
// whose path contains name.
func Find(name string) (file string, data []byte, ok bool) {
	name = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "./"), ".yaml"), ".yml")
	for _, p := range []string{"massgen/configs/", "configs/"} {
		name = strings.TrimPrefix(name, p)
	}
	if name == "" {
		return "", nil, false
	}
	names := Names()
	for _, match := range []func(n string) bool{
		func(n string) bool { return n == name },
		func(n string) bool { return strings.ReplaceAll(n, "/", "_") == name },
		func(n string) bool { return path.Base(n) == name },
	} {
		if i := slices.IndexFunc(names, match); i >= 0 {
			return read(names[i])
		}
	}
	byLength := slices.Clone(names)
	slices.SortStableFunc(byLength, func(a, b string) int { return len(a) - len(b) })
	for _, n := range byLength {
		if strings.Contains(n, name) {
			return read(n)
		}
	}
	return "", nil, false
}

// Near lists the examples in the folder name points into (its directory
// part, "providers/gemini" for "providers/gemini/gemini_3_flash"), or, when
// that folder has none, in its nearest parent that has some: what to offer
// instead when Find finds nothing.
func Near(name string) []string {
	name = strings.TrimSuffix(name, ".yaml")
	for _, p := range []string{"massgen/configs/", "configs/"} {
		name = strings.TrimPrefix(name, p)
	}
	for dir := path.Dir(name); dir != "." && dir != "/"; dir = path.Dir(dir) {
		var out []string
		for _, n := range Names() {
			if strings.HasPrefix(n, dir+"/") {
				out = append(out, n)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

func read(n string) (string, []byte, bool) {
	data, err := files.ReadFile(n + ".yaml")
	return n + ".yaml", data, err == nil
}
