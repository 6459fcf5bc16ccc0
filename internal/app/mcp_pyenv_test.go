package app

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// pyenvPython is python3 as found on PATH when it is a pyenv shim, and the
// pyenv root. It skips without pyenv, which is the machine's (CI installs
// none), and without bubblewrap, except in CI, which installs it.
func pyenvPython(t *testing.T) (shim, root string) {
	t.Helper()
	skip := t.Skip
	if _, err := sandbox.Bwrap(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	shim, err := exec.LookPath("python3")
	if err != nil {
		skip("no python3 on PATH")
	}
	out, err := exec.Command("pyenv", "root").Output()
	if err != nil {
		skip(fmt.Sprintf("no pyenv here (%v): python3 is %s", err, shim))
	}
	root = strings.TrimSpace(string(out))
	if filepath.Dir(shim) != filepath.Join(root, "shims") {
		skip(fmt.Sprintf("python3 on PATH (%s) is not a pyenv shim", shim))
	}
	return shim, root
}

// A stdio MCP server launched as `python3 server.py`, where python3 is a
// pyenv shim, starts in the sandbox of an agent with a workspace and
// answers: the interpreter the shim would pick is run, its installation
// shown, and nothing more of the home: a secret file there, pyenv's own
// files and the rest of the home's listing stay out of the server's reach.
func TestPythonMCPServerThroughAPyenvShimRunsInTheSandbox(t *testing.T) {
	shim, root := pyenvPython(t)
	out, err := exec.Command("pyenv", "which", "python3").Output()
	must(t, err)
	real := strings.TrimSpace(string(out))
	home, err := os.UserHomeDir()
	must(t, err)
	secret, err := os.CreateTemp(home, ".massgen-test-secret-")
	if err != nil {
		t.Skipf("cannot write a stand-in secret in the home: %v", err)
	}
	t.Cleanup(func() { os.Remove(secret.Name()) })
	_, err = secret.WriteString("PRIVATE KEY")
	must(t, err)
	must(t, secret.Close())
	server, err := filepath.Abs(filepath.Join("testdata", "mcp_server.py"))
	must(t, err)
	// The home's listing shows only the way to the interpreter's
	// installation (bubblewrap makes the directories above a bind).
	listing := "DENIED FileNotFoundError"
	if rel, err := filepath.Rel(home, real); err == nil && filepath.IsLocal(rel) {
		listing = "NAMES " + strings.Split(rel, string(filepath.Separator))[0] + " END"
	}
	work := t.TempDir()
	yaml := fmt.Sprintf(`agent:
  id: a
  backend:
    type: sim
    model: prober
    cwd: ws
    mcp_servers:
      py: {command: python3, args: [%[1]q]}
    scenario:
      defaults: {ttft_ms: 0}
      models:
        prober:
          steps:
            - calls:
                - {name: mcp__py__whoami, arguments: '{}'}
                - {name: mcp__py__read, arguments: '{"what": "%[2]s"}'}
                - {name: mcp__py__read, arguments: '{"what": "%[3]s/version"}'}
                - {name: mcp__py__list, arguments: '{"where": "%[4]s"}'}
            - expect_results:
                - {name: mcp__py__whoami, contains: "executable %[5]s"}
                - {name: mcp__py__read, contains: "DENIED FileNotFoundError"}
                - {name: mcp__py__read, contains: "DENIED FileNotFoundError"}
                - {name: mcp__py__list, contains: "%[6]s"}
              answer: "probed"
`, server, secret.Name(), root, home, real, listing)
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &lockedBuffer{b: &stderr}, WorkDir: work}
	res, err := Execute(t.Context(), env, Request{Question: "Probe.", Team: Team{ConfigYAML: []byte(yaml)}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
	if err != nil {
		t.Fatalf("%v\n%s", err, yaml)
	}
	logs, _ := os.ReadFile(filepath.Join(res.LogDir, "mcp_py_stderr.log"))
	// "probed" is the answer only when every result was as expected.
	if res.Status != "completed" || res.Final != "probed" || res.Tools["a"].Calls != 4 || res.Tools["a"].Errors != 0 {
		ev, _ := os.ReadFile(filepath.Join(res.LogDir, "coordination_events.jsonl"))
		t.Fatalf("python3 is %s (pyenv: %s): status %s, final %q, tools %+v, err %v; stderr:\n%s\nserver log:\n%s\nevents:\n%s",
			shim, real, res.Status, res.Final, res.Tools, res.Err, stderr.String(), logs, ev)
	}
	noFailedTurn(t, res.LogDir)
	if !strings.Contains(string(logs), "python MCP server up: "+real) {
		t.Errorf("the server's log %q does not name the interpreter %s", logs, real)
	}
}
