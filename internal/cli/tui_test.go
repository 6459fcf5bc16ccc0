package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/app"
)

// Without a terminal the default is plain; --automation is silent; the
// upstream names map onto the three modes.
func TestChooseDisplay(t *testing.T) {
	pipe := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}}
	for _, tt := range []struct {
		flag        string
		noDisplay   bool
		automation  bool
		want, error string
	}{
		{want: displayPlain},
		{automation: true, want: displaySilent},
		{flag: "silent", automation: true, want: displaySilent},
		{noDisplay: true, want: displayPlain},
		{flag: "tui", want: displayTUI},
		{flag: "rich", want: displayTUI},
		{flag: "Textual", want: displayTUI},
		{flag: "plain", want: displayPlain},
		{flag: "simple", want: displayPlain},
		{flag: "silent", want: displaySilent},
		{flag: "fancy", error: "use tui, plain or silent"},
		{flag: "tui", automation: true, error: "--automation"},
		{flag: "silent", noDisplay: true, error: "--no-display"},
	} {
		got, err := chooseDisplay(pipe, tt.flag, tt.noDisplay, tt.automation)
		switch {
		case tt.error != "" && (err == nil || !strings.Contains(err.Error(), tt.error)):
			t.Errorf("%+v: error %v, want one saying %q", tt, err, tt.error)
		case tt.error == "" && (err != nil || got != tt.want):
			t.Errorf("%+v: %q, %v; want %q", tt, got, err, tt.want)
		}
	}
	// A file that is not a terminal is no terminal either.
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, _ := chooseDisplay(&Env{Stdin: f, Stdout: f}, "", false, false); got != displayPlain {
		t.Errorf("stdin and stdout on a regular file: %q, want plain", got)
	}
}

// --display silent prints the answer and no progress lines.
func TestSilentDisplayPrintsNoProgress(t *testing.T) {
	r := massgen(t, t.Context(), nil, nil, "--display", "silent", "--config", "@examples/sim_three_agents", "q")
	if r.code != 0 || r.stdout == "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	for _, progress := range []string{"massgen: run started", "working", "logs:"} {
		if strings.Contains(r.stderr, progress) {
			t.Errorf("silent mode printed %q on stderr:\n%s", progress, r.stderr)
		}
	}
}

// The TUI forced without a terminal draws the run on stdout, leaves at
// its end (nobody could press q), and prints the answer after it; the
// run's log line waits until the screen is given back.
func TestForcedTUIWithoutATerminalEndsWithTheAnswer(t *testing.T) {
	plain := massgen(t, t.Context(), nil, nil, "--display", "plain", "--no-logs", "--config", "@examples/sim_three_agents", "q")
	r := massgen(t, t.Context(), nil, nil, "--display", "tui", "--config", "@examples/sim_three_agents", "q")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "\x1b[?1049h") || !strings.Contains(r.stdout, "\x1b[?1049l") {
		t.Error("the TUI did not enter and leave the alternate screen")
	}
	after := r.stdout[strings.LastIndex(r.stdout, "\x1b[?1049l"):]
	if answer := strings.TrimSpace(plain.stdout); answer == "" || !strings.Contains(after, answer) {
		t.Errorf("the answer %q is not printed after the display:\n%q", answer, after)
	}
	if strings.Contains(r.stderr, "massgen: run started") || !strings.Contains(r.stderr, "logs: ") {
		t.Errorf("stderr has progress lines, or no log line:\n%s", r.stderr)
	}
}

// ui.display_type chooses the display when no flag does: silent prints no
// progress, simple prints its lines, and a full-screen name on a pipe
// (no terminal to draw on) prints lines too, without calling itself
// ignored. A flag wins over the config.
func TestConfigDisplayType(t *testing.T) {
	team, err := os.ReadFile("../../examples/sim_three_agents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		display  string
		flags    []string
		progress bool
	}{
		{display: "silent", progress: false},
		{display: "simple", progress: true},
		{display: "textual", progress: true},
		{display: "rich_terminal", progress: true},
		{display: "silent", flags: []string{"--display", "plain"}, progress: true},
		{display: "simple", flags: []string{"--display", "silent"}, progress: false},
	} {
		t.Run(tt.display+strings.Join(tt.flags, ""), func(t *testing.T) {
			cfg := string(team) + "\nui:\n  display_type: " + tt.display + "\n"
			args := append(append([]string{}, tt.flags...), "--config", "team.yaml", "q")
			r := massgen(t, t.Context(), map[string]string{"team.yaml": cfg}, nil, args...)
			if r.code != 0 || strings.TrimSpace(r.stdout) == "" {
				t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
			}
			if got := strings.Contains(r.stderr, "massgen: run started"); got != tt.progress {
				t.Errorf("progress lines: %v, want %v:\n%s", got, tt.progress, r.stderr)
			}
			if strings.Contains(r.stderr, "display_type") {
				t.Errorf("display_type is reported:\n%s", r.stderr)
			}
		})
	}
}

// A config that does not load leaves the terminal's choice: the run then
// says what is wrong with it.
func TestConfigDisplayKeepsModeOnABadConfig(t *testing.T) {
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &bytes.Buffer{}, WorkDir: t.TempDir()}
	if got := configDisplay(env, app.Request{Team: app.Team{Config: "missing.yaml"}}, displayTUI); got != displayTUI {
		t.Errorf("a missing config: %q, want tui kept", got)
	}
}

// Interactive mode needs keys from a terminal for the TUI: with --display
// tui and a piped stdin it reads questions as plain lines.
func TestInteractiveTUIWithoutATerminalReadsLines(t *testing.T) {
	dir := t.TempDir()
	r := massgenIn(t, t.Context(), dir, "What is the capital of France?\n", "--display", "tui", "--config", "@examples/sim_three_agents")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "\x1b[?1049h") || !strings.Contains(r.stderr, "massgen interactive mode") {
		t.Errorf("not the plain loop: stdout %q\nstderr:\n%s", r.stdout, r.stderr)
	}
	if list, turns := sessionTurns(t, dir); len(list) != 1 || len(turns[list[0].ID]) != 1 {
		t.Errorf("sessions %v, turns %v: want one session with one turn", list, turns)
	}
}
