package config

import (
	"strings"
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

func TestDockerKeysDecode(t *testing.T) {
	cfg := parseOK(t, `agent:
  backend:
    type: sim
    cwd: w
    enable_mcp_command_line: true
    command_line_execution_mode: docker
    command_line_docker_image: "python:3.12-slim"
    command_line_docker_memory_limit: "2g"
    command_line_docker_cpu_limit: 1.5
    command_line_docker_network_mode: bridge
    command_line_docker_enable_sudo: true
    command_line_docker_credentials:
      mount: [gh_config, ssh_keys, git_config]
      env_vars: [GITHUB_TOKEN]
    command_line_docker_packages:
      preinstall:
        python: [requests, "numpy==2.1.0"]
        npm: [typescript]
        system: [jq]
`, nil)
	if len(cfg.Warnings) != 0 || len(cfg.IgnoredFeatures()) != 0 {
		t.Errorf("warnings:%s\nignored: %q", dump(cfg.Warnings), cfg.IgnoredFeatures())
	}
	want := Docker{Image: "python:3.12-slim", Memory: 2 << 30, CPUs: 1.5, Network: "bridge", Sudo: true,
		CredentialFiles: []string{".config/gh", ".ssh", ".gitconfig"}, CredentialEnv: []string{"GITHUB_TOKEN"},
		System: []string{"jq"}, Python: []string{"requests", "numpy==2.1.0"}, NPM: []string{"typescript"}}
	if diff := cmp.Diff(want, cfg.Agents[0].Backend.CommandLine.Docker); diff != "" {
		t.Errorf("Docker (-want +got):\n%s", diff)
	}
	// The packages map is also taken without preinstall, and a size in bytes.
	cfg = parseOK(t, "agent:\n  backend: {type: sim, cwd: w, enable_mcp_command_line: true, command_line_docker_memory_limit: 1048576, command_line_docker_packages: {python: [rich]}}\n", nil)
	if d := cfg.Agents[0].Backend.CommandLine.Docker; d.Memory != 1<<20 || len(d.Python) != 1 {
		t.Errorf("docker %+v", d)
	}
}

func TestDockerKeyErrorsPointAtTheValue(t *testing.T) {
	for _, c := range []struct {
		yaml, key, msg, sugg string
		line                 int
	}{
		{"command_line_docker_memory_limit: lots", "agent.backend.command_line_docker_memory_limit", "invalid memory limit", "2g", 6},
		{"command_line_docker_cpu_limit: 0", "agent.backend.command_line_docker_cpu_limit", "more than 0", "CPUs", 6},
		{"command_line_docker_cpu_limit: \"2\"", "agent.backend.command_line_docker_cpu_limit", "must be a number", "remove the quotes", 6},
		{"command_line_docker_network_mode: nat", "agent.backend.command_line_docker_network_mode", "invalid command_line_docker_network_mode", "none", 6},
		{"command_line_docker_credentials:\n      mount: [ssh_key]", "agent.backend.command_line_docker_credentials.mount[0]", "unknown credential 'ssh_key'", "ssh_keys", 7},
	} {
		src := "agent:\n  backend:\n    type: sim\n    cwd: w\n    enable_mcp_command_line: true\n    " + c.yaml + "\n"
		d, ok := find(diagnose(t, src, nil), c.key, Error)
		if !ok || !strings.Contains(d.Message, c.msg) || !strings.Contains(d.Suggestion, c.sugg) || d.Line != c.line {
			t.Errorf("%s: %+v (all:%s)", c.yaml, d, dump(diagnose(t, src, nil)))
		}
	}
	// An unknown key inside is a warning that names it.
	ds := diagnose(t, "agent:\n  backend: {type: sim, cwd: w, command_line_docker_packages: {pip: [x]}}\n", nil)
	if d, ok := find(ds, "agent.backend.command_line_docker_packages.pip", Warning); !ok || !strings.Contains(d.Suggestion, "python") && !strings.Contains(d.Message, "pip") {
		t.Errorf("unknown packages key: %s", dump(ds))
	}
}

func TestSandboxLimitKeys(t *testing.T) {
	cfg := parseOK(t, `agent:
  backend:
    type: sim
    cwd: w
    workspace_max_size_mb: 512
    enable_mcp_command_line: true
    command_line_max_processes: 256
`, nil)
	b := cfg.Agents[0].Backend
	if len(cfg.Warnings) != 0 || b.WorkspaceMaxMB != 512 || b.CommandLine == nil || b.CommandLine.MaxProcesses != 256 {
		t.Errorf("limits: %d %+v, warnings:%s", b.WorkspaceMaxMB, b.CommandLine, dump(cfg.Warnings))
	}
	for _, bad := range []string{"command_line_max_processes: many", "workspace_max_size_mb: -1"} {
		_, err := Parse([]byte("agent:\n  backend:\n    type: sim\n    cwd: w\n    enable_mcp_command_line: true\n    "+bad+"\n"), "limits.yaml", func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), "limits.yaml:6") {
			t.Errorf("%s: %v, want an error at limits.yaml:6", bad, err)
		}
	}
}
