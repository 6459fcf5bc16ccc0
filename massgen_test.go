package massgen_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen"
	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
)

func noEnv(string) string { return "" }

func TestRunOnTheSimulator(t *testing.T) {
	res, err := massgen.Run(context.Background(), "What is the capital of France?", massgen.Options{
		Config: "@examples/sim_three_agents", NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != massgen.Completed || res.Winner == "" || !strings.Contains(res.Answer, "Final answer") || res.Votes[res.Winner] == 0 {
		t.Fatalf("unexpected result: %+v", res)
	}
}

func TestRunReportsConfigErrors(t *testing.T) {
	_, err := massgen.Run(context.Background(), "q", massgen.Options{Config: "missing.yaml", WorkDir: t.TempDir(), Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "config file not found") {
		t.Fatalf("err = %v", err)
	}
}

// The library must stay a library: linking it must not pull in the
// command line, its flag parser or the HTTP server.
func TestTheLibraryLinksNeitherTheCLINorTheServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{"github.com/spf13/cobra", "github.com/massgen/massgen/internal/cli", "github.com/massgen/massgen/internal/server"} {
		if slices.Contains(deps, banned) {
			t.Errorf("the massgen package depends on %s", banned)
		}
	}
	if !slices.Contains(deps, "github.com/massgen/massgen/internal/app") {
		t.Error("the massgen package does not go through internal/app") // the check above would pass vacuously
	}
}

func TestConfigGivenAsYAMLBytes(t *testing.T) {
	cfg := []byte("agents:\n  - {id: one, backend: {type: sim, model: sim-one}}\n  - {id: two, backend: {type: sim, model: sim-two}}\n")
	res, err := massgen.Run(t.Context(), "q", massgen.Options{ConfigYAML: cfg, NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err != nil || res.Status != massgen.Completed || len(res.Usage) != 2 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	_, err = massgen.Run(t.Context(), "q", massgen.Options{ConfigYAML: []byte("agents:\n  - {id: a, backend: {type: opena, model: x}}\n"),
		NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "config.yaml:2") || !strings.Contains(err.Error(), "did you mean 'openai'") {
		t.Fatalf("a bad in-memory config: err = %v, want its line and a suggestion", err)
	}
}

func TestTeamGivenInCodeIsValidatedAndRuns(t *testing.T) {
	srv, url := simtest.Start(t, "")
	res, err := massgen.Run(t.Context(), "q", massgen.Options{Agents: []massgen.AgentSpec{
		{ID: "a", Backend: "chatcompletion", Model: "m-a", BaseURL: url, APIKey: "k", Params: map[string]any{"temperature": 0.25}},
		{ID: "b", Backend: "chatcompletion", Model: "m-b", BaseURL: url, APIKey: "k", SystemMessage: "You are b."},
	}, NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err != nil || res.Status != massgen.Completed {
		t.Fatalf("res %+v, err %v", res, err)
	}
	models := map[string]bool{}
	for _, r := range srv.Requests() {
		models[r.Model] = true
	}
	if !models["m-a"] || !models["m-b"] {
		t.Errorf("models called: %v", models)
	}
	_, err = massgen.Run(t.Context(), "q", massgen.Options{Agents: []massgen.AgentSpec{{ID: "a", Backend: "opena", Model: "x"}},
		NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "agents[0].backend.type") {
		t.Fatalf("a bad team in code: err = %v", err)
	}
}

func TestHistoryReachesTheAgents(t *testing.T) {
	srv, url := simtest.Start(t, "")
	res, err := massgen.Run(t.Context(), "And of Italy?", massgen.Options{
		Agents:  []massgen.AgentSpec{{ID: "a", Backend: "chatcompletion", Model: "m", BaseURL: url, APIKey: "k"}},
		History: []massgen.Message{{Role: "user", Content: "Capital of France?"}, {Role: "assistant", Content: "Paris, the city of light."}},
		NoLogs:  true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err != nil || res.Status != massgen.Completed {
		t.Fatalf("res %+v, err %v", res, err)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !slices.ContainsFunc(reqs[0].Messages, func(m llmsim.Message) bool {
		return strings.Contains(m.Content, "Assistant: Paris, the city of light.")
	}) {
		t.Errorf("the first request does not carry the history: %+v", reqs)
	}
	_, err = massgen.Run(t.Context(), "q", massgen.Options{Config: "@examples/sim_single_agent", History: []massgen.Message{{Role: "system", Content: "x"}},
		NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), `role "system"`) {
		t.Errorf("a history message with role system: err = %v", err)
	}
}

func TestStreamYieldsEventsAndBreakingCancelsTheRun(t *testing.T) {
	o := massgen.Options{Config: "@examples/sim_three_agents", NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv}
	var seen []string
	o.OnEvent = func(e massgen.Event) { seen = append(seen, e.Type) }
	events, result := massgen.Stream(t.Context(), "q", o)
	var types []string
	var last uint64
	for e := range events {
		if e.Seq <= last {
			t.Fatalf("event %d after %d: out of order", e.Seq, last)
		}
		last = e.Seq
		types = append(types, e.Type)
	}
	res, err := result()
	if err != nil || res.Status != massgen.Completed {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if types[0] != "run_started" || types[len(types)-1] != "run_finished" || !slices.Contains(types, "vote_cast") {
		t.Errorf("events %v", types)
	}
	if !slices.Equal(seen, types) {
		t.Errorf("OnEvent saw %d events, the iterator %d", len(seen), len(types))
	}
	// A hanging model: breaking out of the loop must end the run at once.
	hang := massgen.Options{ConfigYAML: []byte("agent: {id: a, backend: {type: sim, scenario: {defaults: {always: {fault: hang}}, models: {}}}}\n"),
		NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv}
	events, result = massgen.Stream(t.Context(), "q", hang)
	for e := range events {
		if e.Type == "turn_started" {
			break
		}
	}
	if res, err := result(); err != nil || res.Status != massgen.Interrupted {
		t.Fatalf("after break: res %+v, err %v; want interrupted", res, err)
	}
}

// Past the run deadline and the presentation grace, the winner's stored
// answer is the answer, and the Result says so (issue 8 §2).
func TestResultSaysWhenTheStoredAnswerIsFinal(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"c.yaml": "agents:\n  - {id: a, backend: {type: sim, model: sim-a, scenario: s.yaml}}\n  - {id: b, backend: {type: sim, model: sim-b, scenario: s.yaml}}\n" +
			"timeout_settings: {orchestrator_timeout_seconds: 1.5, presentation_grace_seconds: 0.3}\n",
		"s.yaml": "defaults:\n  steps:\n    - {when: presentation, fault: hang}\n", // every presentation hangs
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := massgen.Run(t.Context(), "q", massgen.Options{Config: "c.yaml", NoLogs: true, WorkDir: dir, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != massgen.Completed || res.Answer == "" || !res.GraceExpired || !strings.Contains(res.Fallback, "presentation grace") {
		t.Fatalf("status=%s answer=%q grace expired=%v fallback=%q: the result does not say the stored answer is final",
			res.Status, res.Answer, res.GraceExpired, res.Fallback)
	}
	ok, err := massgen.Run(t.Context(), "q", massgen.Options{Config: "@examples/sim_three_agents", NoLogs: true, WorkDir: dir, Getenv: noEnv})
	if err != nil || ok.Fallback != "" || ok.GraceExpired {
		t.Errorf("a presented answer: fallback=%q grace expired=%v (%v)", ok.Fallback, ok.GraceExpired, err)
	}
}

func TestTeamGivenAsModelNames(t *testing.T) {
	res, err := massgen.Run(t.Context(), "q", massgen.Options{Models: []string{"sim-alpha", "sim-beta", "sim-alpha"},
		NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err != nil || res.Status != massgen.Completed {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if len(res.Usage) != 3 {
		t.Errorf("agents = %v, want three (a model named twice is two agents)", res.Usage)
	}
	_, err = massgen.Run(t.Context(), "q", massgen.Options{Models: []string{"gpt-4o-mnii"}, NoLogs: true, WorkDir: t.TempDir(), Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "gpt-4o-mnii") {
		t.Errorf("an unknown model: err = %v, want it named", err)
	}
}

// A run whose agents all fail says why as data: which kind of failure,
// from which provider, with which status (issue 18, failures as data).
func TestAFailedRunSaysWhyAsData(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"c.yaml": "agents:\n  - {id: a, backend: {type: sim, model: sim-a, scenario: s.yaml}}\n" +
			"orchestrator: {max_consecutive_failures: 1}\n",
		"s.yaml": "defaults:\n  always: {fault: \"401\", text: \"invalid api key\"}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var failed []massgen.Event
	res, err := massgen.Run(t.Context(), "q", massgen.Options{Config: "c.yaml", NoLogs: true, WorkDir: dir, Getenv: noEnv,
		OnEvent: func(e massgen.Event) {
			if e.Failure != nil {
				failed = append(failed, e)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != massgen.Failed {
		t.Fatalf("status %s, want failed", res.Status)
	}
	re, ok := errors.AsType[*massgen.RunError](res.Err)
	if !ok || len(re.Failures) != 1 || len(res.Failures) != 1 {
		t.Fatalf("Err %#v, Failures %+v: want a *RunError with the agent's failure", res.Err, res.Failures)
	}
	f := re.Failures[0]
	if !f.IsAuth() || f.IsRetryable() || f.Kind != massgen.FailAuth || f.Agent != "a" || f.Provider != "sim" || f.Model != "sim-a" || f.Status != 401 {
		t.Errorf("failure %+v, want auth from sim model sim-a, status 401, not retryable", f)
	}
	if len(failed) == 0 || failed[0].Failure.Kind != massgen.FailAuth {
		t.Errorf("events with a failure: %+v, want the turn's auth failure", failed)
	}
}
