// Command testsummary reads `go test -json` on stdin, prints what `go test`
// without -v would (each package's result, a failed test's output), and
// ends with what was skipped and why, grouped by what would run it
// (scripts/test uses it).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// group is what a set of skips needs, and how to give it to them.
type group struct {
	name, how string
	match     func(reason string) bool
}

var groups = []group{
	{"npm packages", "run `npm ci` in tests/mcp-npm (the MCP servers) and tests/cli-agents (the coding-agent CLIs)",
		containsAny("npm ci", "tests/mcp-npm", "tests/cli-agents", "server-everything", "CLI is not installed", "no Codex CLI")},
	{"a Docker engine", "start one the tests can reach (`bash tests/docker/start.sh` on Debian or Ubuntu, as CI does)",
		containsAny("docker")},
	{"data beside the repository", "the MassGen reference configs and recorded provider traffic live in ../shared, which only the project's own workspace has; nothing to do",
		containsAny("../shared", "reference configs", "recordings", "beside the project", "upstream tool file")},
	{"tmux, bubblewrap, a pseudo-terminal or Python", "install them (`apt-get install tmux bubblewrap python3`)",
		containsAny("tmux", "bubblewrap", "pseudo-terminal", "python", "pyenv")},
}

func containsAny(subs ...string) func(string) bool {
	return func(s string) bool {
		s = strings.ToLower(s)
		for _, sub := range subs {
			if strings.Contains(s, strings.ToLower(sub)) {
				return true
			}
		}
		return false
	}
}

// position is the "file_test.go:12: " a t.Skip message starts with.
var position = regexp.MustCompile(`^\s+\S+_test\.go:\d+: `)

func main() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	summarize(os.Stdin, out)
}

func summarize(in io.Reader, w io.Writer) {
	out := bufio.NewWriter(w)
	defer out.Flush()
	lines := map[string][]string{} // the output of each running test
	type skip struct{ test, reason string }
	var skips []skip
	dec := json.NewDecoder(bufio.NewReaderSize(in, 1<<20))
	for {
		var e testEvent
		if err := dec.Decode(&e); err == io.EOF {
			break
		} else if err != nil {
			// Not JSON (a build failure's text): pass the rest through.
			fmt.Fprintf(out, "testsummary: %v\n", err)
			io.Copy(out, dec.Buffered())
			io.Copy(out, in)
			return
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			switch {
			case e.Test != "":
				lines[key] = append(lines[key], e.Output) // printed if it fails
			case e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== "):
				out.WriteString(e.Output) // ok/FAIL lines, a build failure
			}
		case "skip":
			if e.Test != "" {
				reason := ""
				for _, l := range lines[key] {
					if position.MatchString(l) {
						reason = strings.TrimSpace(position.ReplaceAllString(l, ""))
					}
				}
				skips = append(skips, skip{e.Package + "." + e.Test, reason})
			}
			delete(lines, key)
		case "build-output": // a package that does not compile
			out.WriteString(e.Output)
		case "fail":
			for _, l := range lines[key] {
				out.WriteString(l)
			}
			delete(lines, key)
		case "pass":
			delete(lines, key)
		}
	}
	if len(skips) == 0 {
		fmt.Fprintln(out, "\nNo test was skipped.")
		return
	}
	fmt.Fprintf(out, "\nSkipped: %s. What they need and how to run them:\n", plural(len(skips), "test"))
	byGroup := make([][]skip, len(groups)+1)
	for _, s := range skips {
		i := len(groups)
		for j, g := range groups {
			if g.match(s.reason) {
				i = j
				break
			}
		}
		byGroup[i] = append(byGroup[i], s)
	}
	for i, ss := range byGroup {
		if len(ss) == 0 {
			continue
		}
		if i < len(groups) {
			verb := "need"
			if len(ss) == 1 {
				verb = "needs"
			}
			fmt.Fprintf(out, "- %d %s %s: %s\n", len(ss), verb, groups[i].name, groups[i].how)
			continue
		}
		// The rest, by reason.
		reasons := map[string]int{}
		for _, s := range ss {
			reasons[s.reason]++
		}
		keys := make([]string, 0, len(reasons))
		for r := range reasons {
			keys = append(keys, r)
		}
		sort.Strings(keys)
		fmt.Fprintf(out, "- %s:\n", plural(len(ss), "other"))
		for _, r := range keys {
			fmt.Fprintf(out, "    %d × %s\n", reasons[r], firstLine(r))
		}
	}
	fmt.Fprintln(out, "CI (`bash .ci/run`, CI=true) installs all of these, and there a skip is a failure.")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func firstLine(s string) string {
	if s == "" {
		return "(no reason given)"
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
