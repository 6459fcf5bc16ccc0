package app

import (
	"testing"
)

// --quick (Request.Quick) gives each agent one answer and makes the
// winning answer final; --single-agent (Request.SingleAgent) keeps one
// agent of the team. The config's other settings stay as written.
func TestModesChangeTheResolvedConfig(t *testing.T) {
	yaml := []byte("agents:\n  - id: a\n    backend: {type: sim}\n  - id: b\n    backend: {type: sim}\norchestrator: {max_new_answers_per_agent: 4}\n")
	env := &Env{Getenv: func(string) string { return "" }, WorkDir: t.TempDir()}
	plain, err := ResolveConfig(env, &Request{Team: Team{ConfigYAML: yaml}}, env.Getenv)
	if err != nil || plain.Orchestrator.MaxNewAnswersPerAgent != 4 || plain.UI.EnableFinalPresentation != nil || len(plain.Agents) != 2 {
		t.Fatalf("without modes: %+v, %v", plain.Orchestrator, err)
	}
	quick, err := ResolveConfig(env, &Request{Team: Team{ConfigYAML: yaml}, Overrides: Overrides{Quick: true, SingleAgent: "b"}}, env.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if quick.Orchestrator.MaxNewAnswersPerAgent != 1 || quick.UI.EnableFinalPresentation == nil || *quick.UI.EnableFinalPresentation {
		t.Errorf("--quick: max answers %d, final presentation %v", quick.Orchestrator.MaxNewAnswersPerAgent, quick.UI.EnableFinalPresentation)
	}
	if len(quick.Agents) != 1 || quick.Agents[0].ID != "b" {
		t.Errorf("--single-agent b: agents %+v", quick.Agents)
	}
	first, err := ResolveConfig(env, &Request{Team: Team{ConfigYAML: yaml}, Overrides: Overrides{SingleAgent: FirstAgent}}, env.Getenv)
	if err != nil || len(first.Agents) != 1 || first.Agents[0].ID != "a" {
		t.Errorf("--single-agent: %+v, %v", first.Agents, err)
	}
}
