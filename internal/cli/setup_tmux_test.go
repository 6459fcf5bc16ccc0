package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestSetupAndQuickstartByKeystrokes drives the two wizards in a real
// terminal (tmux), as a user would: a key typed into setup's hidden field
// never shows on screen and lands in a 0600 file, checked against a
// provider stand-in; quickstart then offers the keyed provider first, and a
// team picked on the simulator runs in the TUI until q.
func TestSetupAndQuickstartByKeystrokes(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed; apt-get install tmux to run the terminal test")
	}
	const secret = "sk-ant-TOPSECRET-42"
	var checks atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checks.Add(1)
		if r.URL.Path != "/v1/models" || r.Header.Get("x-api-key") != secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"data":[]}`))
	}))
	defer srv.Close()

	bin := filepath.Join(t.TempDir(), "massgen")
	build := exec.Command("go", "build", "-o", bin, "./cmd/massgen")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := t.TempDir()
	// A server (socket) of its own for each program started: a server
	// whose last session was killed exits a moment later, and a session
	// started on it meanwhile fails ("server exited unexpectedly").
	servers := 0
	socket := ""
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	defer func() { _ = exec.Command("tmux", "-L", socket, "kill-server").Run() }()
	start := func(args string) {
		servers++
		socket = "massgen-setup-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(servers)
		script := fmt.Sprintf(`cd %s && HOME=%s %s %s; echo "EXIT=$?"; exec sleep 600`, home, home, bin, args)
		tmux("-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "100", "-y", "30", "sh", "-c", script)
	}
	capture := func() string { return tmux("capture-pane", "-p", "-t", "run") }
	// waitFor polls the pane (bounded: a wizard that never shows fails the
	// test after a minute instead of hanging it).
	waitFor := func(what string) string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			s := capture()
			if strings.Contains(s, what) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("pane never showed %q:\n%s", what, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	keys := func(k ...string) { tmux(append([]string{"send-keys", "-t", "run"}, k...)...) }
	typeText := func(s string) { tmux("send-keys", "-t", "run", "-l", s) }

	// setup: pick ANTHROPIC_API_KEY (second in the list), type the key.
	start("setup --check-base-url " + srv.URL)
	waitFor("Which API keys")
	keys("Down", "Space", "Enter")
	waitFor("Paste the key (hidden)")
	typeText(secret)
	masked := waitFor(strings.Repeat("*", len(secret)))
	keys("Enter")
	done := waitFor("EXIT=")
	for _, pane := range []string{masked, done} {
		if strings.Contains(pane, secret) || strings.Contains(pane, "TOPSECRET") {
			t.Fatalf("the key is visible on screen:\n%s", pane)
		}
	}
	if !strings.Contains(done, "ANTHROPIC_API_KEY: valid") || !strings.Contains(done, "EXIT=0") || checks.Load() != 1 {
		t.Fatalf("setup (%d checks):\n%s", checks.Load(), done)
	}
	env := filepath.Join(home, ".config", "massgen", ".env")
	if got := readFile(t, env); got != "ANTHROPIC_API_KEY="+secret+"\n" {
		t.Fatalf(".env: %q", got)
	}
	if m := fileMode(t, env); m != 0o600 {
		t.Fatalf(".env mode %o", m)
	}
	tmux("kill-server")

	// quickstart: two agents, both on the simulator (found with the filter,
	// below the keyed Claude models), on one question, in the TUI.
	start(`quickstart "What is the capital of France?"`)
	waitFor("How many agents?")
	keys("Up", "Enter")
	pane := waitFor("Model of agent 1 of 2")
	if first := lineAfter(pane, "filters."); !strings.Contains(first, "claude") || !strings.Contains(first, "key set") {
		t.Errorf("the keyed provider is not offered first: %q\n%s", first, pane)
	}
	for i := range 2 {
		if i == 1 {
			waitFor("Model of agent 2 of 2")
		}
		keys("/")
		typeText("sim")
		waitFor("simulator, no key needed")
		keys("Enter")
	}
	waitFor("Votes")
	waitFor("Final answer")
	keys("q")
	end := waitFor("EXIT=")
	if !strings.Contains(end, "EXIT=0") {
		t.Fatalf("quickstart run:\n%s", end)
	}
	cfg := loadConfig(t, filepath.Join(home, ".massgen", "config.yaml"))
	if len(cfg.Agents) != 2 || cfg.Agents[0].Backend.Type != "sim" || cfg.Agents[1].Backend.Model != "sim-beta" {
		t.Fatalf("config agents %+v", cfg.Agents)
	}
}

// lineAfter is the line of s after the first line containing marker.
func lineAfter(s, marker string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, marker) && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}
