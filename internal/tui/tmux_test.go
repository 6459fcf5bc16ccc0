package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// tmuxSession is massgen running in a detached tmux session on a private
// server socket, as a user's terminal would run it.
type tmuxSession struct {
	t      *testing.T
	socket string
	dir    string
}

// startTmux builds massgen and starts it in a 100×30 tmux pane. When
// massgen exits the pane's shell prints EXIT=<code> and stays, so the
// terminal's state after massgen can be read.
func startTmux(t *testing.T, args string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed; apt-get install tmux to run the terminal test")
	}
	bin := buildOnce(t)
	s := &tmuxSession{t: t, socket: "massgen-tui-test-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(t.Name()), dir: t.TempDir()}
	script := "cd " + s.dir + " && " + bin + " " + args + `; echo "EXIT=$?"; exec sleep 600`
	s.tmux("-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "100", "-y", "30", "sh", "-c", script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

var build struct {
	once sync.Once
	bin  string
	err  error
	dir  string
}

// buildOnce builds massgen once for every tmux test of this process.
func buildOnce(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "massgen-tui-test")
		if build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "massgen")
		cmd := exec.Command("go", "build", "-o", build.bin, "./cmd/massgen")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *tmuxSession) capture() string { return s.tmux("capture-pane", "-p", "-t", "run") }

// waitFor polls the pane until every want is on it, for at most limit.
func (s *tmuxSession) waitFor(what string, limit time.Duration, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		screen := s.capture()
		missing := ""
		for _, w := range want {
			if !strings.Contains(screen, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: %q not on the screen after %s:\n%s", what, missing, limit, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exited waits for massgen to exit and returns its exit code, checking
// that the terminal is restored: no alternate screen, cursor visible.
func (s *tmuxSession) exited() (int, string) {
	s.t.Helper()
	screen := s.waitFor("exit", 30*time.Second, "EXIT=")
	m := regexp.MustCompile(`EXIT=(\d+)`).FindStringSubmatch(screen)
	code, _ := strconv.Atoi(m[1])
	if state := strings.TrimSpace(s.tmux("display", "-p", "-t", "run", "#{alternate_on} #{cursor_flag}")); state != "0 1" {
		s.t.Errorf("after massgen: alternate_on and cursor_flag are %q, want \"0 1\" (main screen, cursor visible)", state)
	}
	return code, screen
}

func TestTmuxRunToTheEndAndQuit(t *testing.T) {
	s := startTmux(t, `--config @examples/sim_latency "What is the capital of France?"`)
	live := s.waitFor("agents at work", 20*time.Second, "MassGen · coordinating", "fast", "medium", "slow",
		"sim-fast [sim]", "Timeline", "working")
	t.Logf("mid-run:\n%s", live)
	// The simulator writes its answers as new_answer's arguments: they
	// stream onto the cards with an estimate of the tokens (issue 22).
	streaming := s.waitFor("an answer streaming", 20*time.Second, "✎ new_answer:", "~")
	if !regexp.MustCompile(`~[0-9,]+ tok`).MatchString(streaming) {
		t.Errorf("no card shows its tokens growing:\n%s", streaming)
	}
	// A resize to 80×24 redraws the screen for its new size: the footer
	// on the 24th line.
	s.tmux("resize-window", "-t", "run", "-x", "80", "-y", "24")
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := strings.Split(strings.TrimRight(s.capture(), "\n"), "\n")
		if len(lines) == 24 && strings.Contains(lines[23], "q ") && strings.HasPrefix(lines[0], " MassGen") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 80×24 frame after the resize:\n%s", strings.Join(lines, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.tmux("resize-window", "-t", "run", "-x", "100", "-y", "30")
	// The header is still on the first line: nothing printed over the
	// display (a stderr line written while it owns the screen scrolls it).
	end := s.waitFor("the end", 60*time.Second, "MassGen · completed", "Final answer by", "Votes · winner", "█", "q exit")
	if !strings.HasPrefix(end, " MassGen · completed") {
		t.Errorf("the screen at the end does not start with the header:\n%s", end)
	}
	t.Logf("at the end:\n%s", end)
	if on := strings.TrimSpace(s.tmux("display", "-p", "-t", "run", "#{alternate_on}")); on != "1" {
		t.Errorf("the TUI is not on the alternate screen (alternate_on %q)", on)
	}
	s.tmux("send-keys", "-t", "run", "q")
	code, after := s.exited()
	if code != 0 {
		t.Errorf("q after the final answer: exit %d, want 0:\n%s", code, after)
	}
	// The answer is printed on the main screen too, for the scrollback.
	if !strings.Contains(after, "Final answer") || !strings.Contains(after, "logs: ") || !strings.Contains(after, "session: ") {
		t.Errorf("the answer, the log line or the session line is not on the screen after the TUI:\n%s", after)
	}
}

// q mid-run asks first; a second q cancels, and the terminal then says
// how to go on (issue 22).
func TestTmuxQMidRunAsksThenCancels(t *testing.T) {
	s := startTmux(t, `--config @examples/sim_latency "What is the capital of France?"`)
	s.waitFor("agents at work", 20*time.Second, "MassGen · coordinating", "slow", "working")
	s.tmux("send-keys", "-t", "run", "q")
	s.waitFor("the question", 10*time.Second, "Cancel the run? q/y cancels it")
	s.tmux("send-keys", "-t", "run", "q")
	code, after := s.exited()
	if code != 4 || !strings.Contains(after, "massgen --continue") {
		t.Errorf("q twice mid-run: exit %d, want 4 and a word on --continue:\n%s", code, after)
	}
}

func TestTmuxQuitMidRunCancelsIt(t *testing.T) {
	s := startTmux(t, `--config @examples/sim_latency "What is the capital of France?"`)
	s.waitFor("agents at work", 20*time.Second, "MassGen · coordinating", "slow", "working")
	s.tmux("send-keys", "-t", "run", "C-c") // as q does
	code, after := s.exited()
	if code != 4 {
		t.Errorf("Ctrl+C mid-run: exit %d, want 4 (interrupted):\n%s", code, after)
	}
	// The logs are kept and say the run was interrupted.
	statuses, _ := filepath.Glob(filepath.Join(s.dir, ".massgen", "massgen_logs", "log_*", "status.json"))
	if len(statuses) != 1 {
		t.Fatalf("status.json files: %v", statuses)
	}
	b, err := os.ReadFile(statuses[0])
	if err != nil || !strings.Contains(string(b), `"interrupted"`) {
		t.Errorf("status.json does not say interrupted (%v):\n%s", err, b)
	}
}

// Interactive mode in the TUI: no question on the command line, two
// questions typed one after the other, each answered with the first as
// history, /status (a command's output in the conversation), then /quit:
// exit 0 and the terminal restored.
func TestTmuxInteractiveTwoQuestions(t *testing.T) {
	s := startTmux(t, `--config @examples/sim_latency`)
	s.waitFor("the prompt", 20*time.Second, "MassGen · interactive · 0 turns", "> Ask the team a question")
	s.tmux("send-keys", "-t", "run", "-l", "What is the capital of France?")
	s.tmux("send-keys", "-t", "run", "Enter")
	s.waitFor("the first turn at work", 20*time.Second, "MassGen · coordinating", "Q: What is the capital of France?", "sim-fast [sim]")
	// Right after the turn the prompt has the keys (issue 22): the next
	// question's first letters are typed, not taken as hotkeys.
	end := s.waitFor("the first answer", 60*time.Second, "interactive · 1 turn", "you> What is the capital of France?", "massgen · by ",
		"enter send")
	t.Logf("first turn at the end:\n%s", end)
	s.tmux("send-keys", "-t", "run", "-l", "qrv")
	s.waitFor("typed", 10*time.Second, "> qrv")
	s.tmux("send-keys", "-t", "run", "BSpace", "BSpace", "BSpace")
	s.tmux("send-keys", "-t", "run", "-l", "And of Italy?")
	s.tmux("send-keys", "-t", "run", "Enter")
	conv := s.waitFor("both turns", 60*time.Second, "interactive · 2 turns", "you> And of Italy?", "enter send")
	t.Logf("the conversation after two turns:\n%s", conv)
	s.tmux("send-keys", "-t", "run", "-l", "/status")
	s.tmux("send-keys", "-t", "run", "Enter")
	s.waitFor("/status", 10*time.Second, "turns:    2 in the history (4 messages)", "config:   @examples/sim_latency")
	s.tmux("send-keys", "-t", "run", "-l", "/quit")
	s.tmux("send-keys", "-t", "run", "Enter")
	code, after := s.exited()
	if code != 0 {
		t.Errorf("/quit: exit %d, want 0:\n%s", code, after)
	}
	if !strings.Contains(after, "2 turns in the history") {
		t.Errorf("the session line is not printed after the display:\n%s", after)
	}
}

// massgen --continue without a question opens the conversation with the
// session's earlier turns.
func TestTmuxContinueShowsTheEarlierTurns(t *testing.T) {
	bin := buildOnce(t)
	s := startTmux(t, `--display plain --config @examples/sim_three_agents "What is the capital of France?" >first.out 2>&1 && `+
		bin+` --continue`)
	s.waitFor("the resumed conversation", 30*time.Second, "interactive · 1 turn", "you> What is the capital of France?",
		"massgen · earlier turn", "continuing after 1 turn.")
	s.tmux("send-keys", "-t", "run", "C-c") // at the empty prompt: leave
	if code, after := s.exited(); code != 0 {
		t.Errorf("Ctrl+C at the empty prompt: exit %d, want 0:\n%s", code, after)
	}
}

// quickstart followed by an interactive session: the config it wrote is
// said in the conversation, not only on the screen the display hides
// (issue 22).
func TestTmuxQuickstartSaysWhatItWroteInTheSession(t *testing.T) {
	s := startTmux(t, `quickstart --yes --agents 2 --backend sim --model sim`)
	s.waitFor("the conversation", 30*time.Second, "MassGen · interactive", "Wrote ", "config.yaml (2 agents", "massgen --config")
	s.tmux("send-keys", "-t", "run", "-l", "/quit")
	s.tmux("send-keys", "-t", "run", "Enter")
	if code, after := s.exited(); code != 0 {
		t.Errorf("/quit: exit %d:\n%s", code, after)
	}
}
