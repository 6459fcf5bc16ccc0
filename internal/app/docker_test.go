package app

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// TestDockerModeInARun: a simulated run whose agents run their commands in
// Docker containers of the configured image: each writes in its workspace
// through a command, cannot touch the project before the presentation nor
// the other's workspace; the winner's command writes the project in the
// final presentation; the result is on disk and in the logs, and no
// container is left when the run ends.
func TestDockerModeInARun(t *testing.T) {
	image := dockertest.Image(t)
	cli := dockertest.Engine(t)
	work := t.TempDir()
	proj := filepath.Join(work, "project")
	must(t, os.MkdirAll(proj, 0o755))
	must(t, os.WriteFile(filepath.Join(proj, "VERSION"), []byte("1\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(proj, ".env"), []byte("TOKEN=x\n"), 0o644))
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: builder
      cwd: workspace1
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: %[2]s
      command_line_docker_memory_limit: 512m
      command_line_docker_cpu_limit: 1
      scenario:
        defaults: {ttft_ms: 0}
        models:
          builder:
            steps:
              - calls:
                  - {name: execute_command, arguments: '{"command": "cat %[1]s/VERSION > seen.txt && echo built > build.txt && cat seen.txt build.txt"}'}
                  - {name: execute_command, arguments: '{"command": "echo 2 > %[1]s/VERSION"}'}
                  - {name: execute_command, arguments: '{"command": "ls ../b 2>&1; test -e /usr/bin/apt-get || echo in-the-image"}'}
              - expect_results:
                  - {name: execute_command, contains: "exit code: 0\n1\nbuilt"}
                  - {name: execute_command, contains: "Read-only file system"}
                  - {name: execute_command, contains: "in-the-image"}
                answer: "A built build.txt."
              - when: coordination
                vote: agent1
              - calls:
                  - {name: execute_command, arguments: '{"command": "echo 2 > %[1]s/VERSION && echo stolen > %[1]s/.env"}'}
              - expect_results:
                  - {name: execute_command, contains: ".env: Read-only file system"}
                text: "Bumped VERSION to 2."
  - id: b
    backend:
      type: sim
      model: voter
      cwd: workspace2
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: %[2]s
      scenario:
        defaults: {ttft_ms: 0}
        models:
          voter:
            steps:
              - calls:
                  - {name: execute_command, arguments: '{"command": "echo b > mine.txt; cat ../a/build.txt"}'}
              - expect_results:
                  - {name: execute_command, contains: "No such file or directory"}
                answer: "B looked around."
              - when: coordination
                vote: agent1
ui: {enable_final_presentation: true}
orchestrator:
  context_paths:
    - {path: project, permission: write, protected_paths: [.env]}
`, proj, image)
	out, stderr := runYAML(t, work, "Build it and bump the version.", yaml, 180)
	if out.Status != "completed" || out.Winner != "a" || out.Final != "Bumped VERSION to 2." {
		logRun(t, out.LogDir)
		t.Fatalf("status %s, winner %q, final %q, err %v; stderr:\n%s", out.Status, out.Winner, out.Final, out.Err, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "VERSION")); string(b) != "2\n" {
		t.Errorf("VERSION after the presentation: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".env")); string(b) != "TOKEN=x\n" {
		t.Errorf("the protected .env: %q", b)
	}
	for _, p := range []string{filepath.Join(out.Workspace, "build.txt"), filepath.Join(out.LogDir, "final", "a", "workspace", "build.txt")} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "built\n" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	if strings.Contains(stderr, "accepted but ignored") {
		t.Errorf("docker keys were called ignored:\n%s", stderr)
	}
	noContainerLeft(t, cli, work)
}

// noContainerLeft fails the test for each agent container (labelled
// massgen.agent) that mounts a directory under work: a container of a
// run from work still there after the run ended.
func noContainerLeft(t *testing.T, cli *client.Client, work string) {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", "massgen.agent")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		for _, m := range c.Mounts {
			if strings.HasPrefix(m.Source, work) {
				t.Errorf("container %s of this run is still there after it ended", c.ID)
			}
		}
	}
}

// logRun logs a run's event and log files, to see why it went wrong.
func logRun(t *testing.T, dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".log") {
			b, _ := os.ReadFile(p)
			t.Logf("%s:\n%s", p, b)
		}
		return nil
	})
}

// TestUpstreamDockerConfigsRunTheirCommands: upstream's docker examples,
// unchanged, run a command in their container. Their images (upstream's
// massgen/mcp-runtime and a custom one) cannot be pulled here, so the
// test image stands under their names for the test, unless the engine
// has the real ones.
func TestUpstreamDockerConfigsRunTheirCommands(t *testing.T) {
	if _, err := os.Stat(referenceConfigs); err != nil {
		t.Skipf("reference configs not found at %s (they live beside the project in ../shared): %v", referenceConfigs, err)
	}
	image := dockertest.Image(t)
	cli := dockertest.Engine(t)
	for _, name := range []string{"massgen/mcp-runtime:latest", "massgen-custom-test:v1"} {
		if _, err := cli.ImageInspect(t.Context(), name); err == nil {
			continue
		}
		if _, err := cli.ImageTag(t.Context(), client.ImageTagOptions{Source: image, Target: name}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.ImageRemove(context.Background(), name, client.ImageRemoveOptions{}) })
	}
	sc, err := llmsim.ParseScenario([]byte(`
models:
  "*":
    ttft_ms: 0
    steps:
      - calls:
          - {name: execute_command, arguments: '{"command": "echo from-the-container > out.txt && cat out.txt && id -u"}'}
      - expect_results:
          - {name: execute_command, contains: "exit code: 0\nfrom-the-container"}
        answer: "It ran."
`))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(referenceConfigs, "tools", "code-execution", "docker_*.yaml"))
	if len(files) == 0 {
		t.Fatal("no docker_*.yaml in tools/code-execution")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			srv := llmsim.New(sc) // its steps are counted per model: one server per config
			url, err := srv.Start("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			abs, _ := filepath.Abs(f)
			work := t.TempDir()
			out, stderr := runFrom(t, work, map[string]string{"MASSGEN_OPENAI_BASE_URL": url}, Request{Question: "Run something.",
				Team: Team{Config: abs}, Overrides: Overrides{Timeout: 120}, Logging: Logging{LogDir: filepath.Join(work, "logs")}})
			if out.Status != "completed" {
				logRun(t, out.LogDir)
				t.Fatalf("status %s, final %q, err %v; stderr:\n%s", out.Status, out.Final, out.Err, stderr)
			}
			if b, err := os.ReadFile(filepath.Join(out.LogDir, "final", out.Winner, "workspace", "out.txt")); string(b) != "from-the-container\n" {
				t.Errorf("the command's file in the winner's workspace: %q %v", b, err)
			}
			if strings.Contains(stderr, "accepted but ignored") {
				t.Errorf("ignored keys:\n%s", stderr)
			}
		})
	}
}
