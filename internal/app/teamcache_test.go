package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/massgen/massgen/internal/llmsim/simtest"
)

// cachedRunner runs questions on config file c.yaml, in a fresh
// directory, through one TeamCache, as massgen serve does.
type cachedRunner struct {
	env   Env
	path  string
	teams *TeamCache
}

// serveRunner returns a cachedRunner, its stderr, and the file's path.
func serveRunner(t *testing.T, cfg string) (*cachedRunner, *syncBuffer, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	env := Env{Getenv: func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}, Stderr: stderr, WorkDir: dir}
	r := &cachedRunner{env: env, path: path, teams: NewTeamCache()}
	t.Cleanup(r.teams.Close)
	return r, stderr, path
}

func (r *cachedRunner) Run(ctx context.Context, question string) (*Outcome, error) {
	env := r.env
	return Execute(ctx, &env, Request{Question: question, Team: Team{Config: r.path, Teams: r.teams}, Logging: Logging{NoLogs: true}})
}

func ask(t *testing.T, r *cachedRunner) *Outcome {
	t.Helper()
	out, err := r.Run(t.Context(), "What is 2+2?")
	if err != nil || out.Status != "completed" {
		t.Fatalf("run: %+v, %v", out, err)
	}
	return out
}

// syncBuffer is a stderr shared by concurrent runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Requests for one config share its team: the config is read once (its
// warning printed once), and the team's models serve every request.
func TestServeRequestsShareTheTeamOfAConfig(t *testing.T) {
	srv, url := simtest.Start(t, "")
	r, stderr, _ := serveRunner(t, fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: m1, base_url: %q}}\nunknown_key: 1\n", url))
	for range 3 {
		ask(t, r)
	}
	if n := strings.Count(stderr.String(), "warning: unknown_key"); n != 1 {
		t.Errorf("the config warning was printed %d times, want once:\n%s", n, stderr)
	}
	if n := len(srv.Requests()); n != 6 {
		t.Errorf("%d model calls, want 6 (answer and review for each of 3 runs)", n)
	}
}

// A config file edited while the server runs is read again.
func TestServeRereadsAChangedConfig(t *testing.T) {
	srv, url := simtest.Start(t, "")
	r, _, path := serveRunner(t, fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: m1, base_url: %q}}\n", url))
	ask(t, r)
	// A different size is enough to tell, whatever the file system's
	// timestamp resolution.
	edited := fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: model-two, base_url: %q}}\n", url)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	ask(t, r)
	reqs := srv.Requests()
	if first, last := reqs[0].Model, reqs[len(reqs)-1].Model; first != "m1" || last != "model-two" {
		t.Errorf("models called: first %q, last %q; want m1 then model-two", first, last)
	}
	// A broken edit is reported once, and the last good team keeps serving.
	if err := os.WriteFile(path, []byte("agents: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := len(srv.Requests())
	found, next := ask(t, r), ask(t, r)
	if got := srv.Requests()[n:]; len(got) != 4 || got[0].Model != "model-two" || got[3].Model != "model-two" {
		t.Errorf("after a broken edit, calls went to %v; want model-two's team still serving", got)
	}
	// A warning of the run that found it (an event of that run, which
	// massgen serve prints), not of the next one.
	const kept = "keeps running the previous version"
	if !slices.ContainsFunc(found.Warnings, func(w string) bool { return strings.Contains(w, kept) }) {
		t.Errorf("the run that found the broken edit does not warn of it: %q", found.Warnings)
	}
	if slices.ContainsFunc(next.Warnings, func(w string) bool { return strings.Contains(w, kept) }) {
		t.Errorf("the next run warns of the broken edit again: %q", next.Warnings)
	}
	// Fixed: read again.
	if err := os.WriteFile(path, []byte(strings.Replace(edited, "model-two", "model-three", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ask(t, r)
	if last := srv.Requests()[len(srv.Requests())-1].Model; last != "model-three" {
		t.Errorf("after the fix, the model called is %q, want model-three", last)
	}
}

// A config that is broken from the start is an error for every request
// (there is no previous version to fall back on).
func TestServeReportsABrokenConfig(t *testing.T) {
	r, _, _ := serveRunner(t, "agents: [\n")
	for range 2 {
		if _, err := r.Run(t.Context(), "q"); err == nil || KindOf(err) != KindConfig {
			t.Fatalf("err = %v, want a config error", err)
		}
	}
}

// The cache holds a bounded number of teams, evicting the least recently
// used; an evicted team still serves the run that holds it.
func TestTeamCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	c := NewTeamCache()
	defer c.Close()
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &bytes.Buffer{}, WorkDir: t.TempDir()}
	_, held, err := c.prepare(env, &Request{Team: Team{Model: "sim-held"}}, env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	for i := range teamCacheSize + 5 {
		_, release, err := c.prepare(env, &Request{Team: Team{Model: fmt.Sprintf("gpt-4o-mini-%d", i)}}, func(k string) string {
			if k == "OPENAI_API_KEY" {
				return "k"
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	if n := len(c.entries); n > teamCacheSize {
		t.Errorf("%d teams cached, want at most %d", n, teamCacheSize)
	}
	if _, ok := c.entries["model\x00gpt-4o-mini-0"]; ok {
		t.Error("the least recently used team is still cached")
	}
	held()
}

// Concurrent requests while the config file changes: every run completes
// on a whole team, and the teams replaced meanwhile are closed once their
// runs end (goleak in TestMain checks the simulators' goroutines).
func TestServeTeamsUnderConcurrentRequestsAndEdits(t *testing.T) {
	_, url := simtest.Start(t, "")
	body := func(model string) string {
		return fmt.Sprintf("agent: {id: a, backend: {type: chatcompletion, model: %s, base_url: %q}}\n", model, url)
	}
	r, _, path := serveRunner(t, body("m"))
	ask(t, r) // a team to fall back on while the file is half-written
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Go(func() {
			res, err := r.Run(t.Context(), "q")
			if err == nil && res.Status != "completed" {
				err = fmt.Errorf("status %s: %v", res.Status, res.Err)
			}
			if err != nil {
				errs <- err
			}
		})
		if i%10 == 5 {
			if err := os.WriteFile(path, []byte(body(strings.Repeat("m", i))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Requests for one config get the very same team: its models, and so its
// rate limiters and circuit breakers, serve them all.
func TestTeamCacheHandsOutOneTeamPerConfig(t *testing.T) {
	c := NewTeamCache()
	defer c.Close()
	env := &Env{Getenv: func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "k"
		}
		return ""
	}, Stderr: &bytes.Buffer{}, WorkDir: t.TempDir()}
	p1, r1, err := c.prepare(env, &Request{Team: Team{Model: "gpt-4o-mini"}}, env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	p2, r2, err := c.prepare(env, &Request{Team: Team{Model: "gpt-4o-mini"}}, env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	p3, r3, err := c.prepare(env, &Request{Team: Team{Model: "gpt-4o"}}, env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer r1()
	defer r2()
	defer r3()
	if p1 != p2 || p1.team.agents[0].Model != p2.team.agents[0].Model {
		t.Error("two requests for one model got different teams")
	}
	if p3 == p1 {
		t.Error("two models share a team")
	}
}
