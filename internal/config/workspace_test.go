package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorkspaceKeysDecodeWithoutWarnings(t *testing.T) {
	cfg := parseOK(t, `agents:
  - id: a
    backend:
      type: sim
      cwd: workspace1
      enable_mcp_command_line: true
      command_line_allowed_commands: ["python.*", "pytest.*"]
      command_line_blocked_commands: ["git push"]
      command_line_allow_unsandboxed: true
      context_paths: [{path: /src, permission: write, protected_paths: [.env]}]
  - id: b
    backend: {type: sim, cwd: workspace2}
orchestrator:
  context_paths:
    - path: /docs
`, nil)
	if len(cfg.Warnings) != 0 || len(cfg.IgnoredFeatures()) != 0 {
		t.Errorf("warnings:%s\nignored: %q", dump(cfg.Warnings), cfg.IgnoredFeatures())
	}
	a, b := cfg.Agents[0].Backend, cfg.Agents[1].Backend
	want := &CommandLine{Mode: "local", Allowed: []string{"python.*", "pytest.*"}, Blocked: []string{"git push"}, AllowUnsandboxed: true}
	if diff := cmp.Diff(want, a.CommandLine); diff != "" {
		t.Errorf("CommandLine (-want +got):\n%s", diff)
	}
	if a.Cwd != "workspace1" || b.Cwd != "workspace2" || b.CommandLine != nil {
		t.Errorf("cwd %q %q, b's command line %+v", a.Cwd, b.Cwd, b.CommandLine)
	}
	wantCP := []ContextPath{{Path: "/src", Permission: "write", ProtectedPaths: []string{".env"}}}
	if diff := cmp.Diff(wantCP, a.ContextPaths); diff != "" {
		t.Errorf("backend context paths (-want +got):\n%s", diff)
	}
	if len(cfg.Orchestrator.ContextPaths) != 1 || cfg.Orchestrator.ContextPaths[0].Permission != "read" {
		t.Errorf("orchestrator context paths %+v", cfg.Orchestrator.ContextPaths)
	}
}

func TestDockerCommandKeysStillWarn(t *testing.T) {
	cfg := parseOK(t, "agent:\n  backend: {type: sim, cwd: w, enable_mcp_command_line: true, command_line_docker_image: x}\n", nil)
	if got := cfg.IgnoredFeatures(); len(got) != 1 || got[0] != "command_line_docker_image (agent agent)" {
		t.Errorf("ignored %q", got)
	}
}
