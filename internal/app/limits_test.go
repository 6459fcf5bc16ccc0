package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18: a 10 MB question peaked at 1.58 GB. A question is at most
// MaxQuestion bytes; a larger one is refused before anything starts, with
// its size, the limit and what to do instead.
func TestAQuestionPastTheLimitIsRefusedSayingWhatToDo(t *testing.T) {
	if err := checkQuestion(strings.Repeat("a", MaxQuestion)); err != nil {
		t.Errorf("a question of exactly MaxQuestion bytes: %v", err)
	}
	env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: t.TempDir()}
	_, err := Execute(t.Context(), env, Request{Question: strings.Repeat("word ", 2<<20), Team: Team{Config: "@examples/sim_single_agent"}, Logging: Logging{NoLogs: true}})
	var ae *Error
	if !errors.As(err, &ae) || ae.Kind != KindConfig {
		t.Fatalf("err = %v, want a config (usage) error", err)
	}
	for _, want := range []string{"the question is 10.0 MiB, more than the 1.0 MiB a question may be", "context path"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

// teamOf is a config of n simulated agents.
func teamOf(n int) string {
	var b strings.Builder
	b.WriteString("agents:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: a%d, backend: {type: sim}}\n", i)
	}
	return b.String()
}

// BenchmarkQuestionSize measures what a run of two simulated agents
// allocates for a question of MaxQuestion bytes (go test -bench
// QuestionSize -benchmem): most of it is status.json rewritten with the
// question at each event, the events files and the provider's request.
func BenchmarkQuestionSize(b *testing.B) {
	dir := b.TempDir()
	q := strings.Repeat("word ", MaxQuestion/5)
	for b.Loop() {
		env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: dir}
		out, err := Execute(b.Context(), env, Request{Question: q, Team: Team{ConfigYAML: []byte(teamOf(2))}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(dir, "logs")}})
		if err != nil || out.Status != "completed" {
			b.Fatal(err, out.Status)
		}
	}
}

// BenchmarkTeamSize measures a run of config.MaxAgents simulated agents
// with logs (go test -bench TeamSize -benchmem).
func BenchmarkTeamSize(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		env := &Env{Getenv: func(string) string { return "" }, Stderr: discard{}, WorkDir: dir}
		out, err := Execute(b.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(teamOf(100))}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(dir, "logs")}})
		if err != nil || out.Status != "completed" {
			b.Fatal(err, out.Status)
		}
	}
}
