package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// auto_discover_custom_tools on the simulator, in docker mode as upstream's
// configs run it: the custom tools library (an upstream-shaped
// massgen/tool/ in the working directory) is copied into custom_tools/ less
// exclude_custom_tools and the tools whose API key the container does not
// get (said by name); a script in the container imports a tool and runs
// it; with task planning the plan opens with the evolving skill's task, and
// the system prompt has the Evolving Skills and Available Custom Tools
// sections; no key of the feature is called ignored.
func TestAutoDiscoveredCustomToolsInARun(t *testing.T) {
	image := dockertest.Image(t)
	dockertest.Engine(t)
	fixedRunName(t)
	work := t.TempDir()
	for p, c := range map[string]string{
		"massgen/tool/_result.py":             "class ExecutionResult:\n    pass\n",
		"massgen/tool/_greet/TOOL.md":         "---\nname: greet\ndescription: Greets someone\nrequires_api_keys: []\n---\n",
		"massgen/tool/_greet/__init__.py":     "from .greet import greet\n",
		"massgen/tool/_greet/greet.py":        "from massgen.tool._result import ExecutionResult\n\ndef greet(n):\n    return 'hello ' + n\n",
		"massgen/tool/_paid/TOOL.md":          "---\nname: paid\ndescription: A paid API\nrequires_api_keys: [PAID_API_KEY]\n---\n",
		"massgen/tool/_paid/paid.py":          "def paid(): pass\n",
		"massgen/tool/_computer_use/TOOL.md":  "---\nname: cu\ndescription: Computer use\n---\n",
		"massgen/tool/_computer_use/cu.py":    "def cu(): pass\n",
		"massgen/tool/workflow_toolkits/v.py": "def vote(): pass\n",
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(work, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(work, p), []byte(c), 0o644))
	}
	yaml := fmt.Sprintf(`agents:
  - id: a
    backend:
      type: sim
      model: coder
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: docker
      command_line_docker_image: %[1]s
      enable_code_based_tools: true
      exclude_file_operation_mcps: true
      auto_discover_custom_tools: true
      exclude_custom_tools: [_computer_use]
      scenario:
        defaults: {ttft_ms: 0}
        models:
          coder:
            steps:
              - calls:
                  - {name: create_task_plan, arguments: '{"tasks": [{"description": "Greet the user", "verification": "the greeting is printed"}]}'}
                  - %[2]s
                  - %[3]s
              - expect_results:
                  - {name: create_task_plan, contains: "create_evolving_skill"}
                  - {name: execute_command, contains: "hello container"}
                  - {name: execute_command, contains: "_greet"}
                answer: "Greeted from a custom tool."
              - when: coordination
                vote: agent1
              - text: "hello container"
`+teammateB+`orchestrator:
  coordination:
    enable_agent_task_planning: true
    task_planning_filesystem_mode: true
`, image, execCall(`python3 -c "from custom_tools._greet.greet import greet; print(greet('container'))"`), execCall("ls custom_tools"))
	out, stderr := runYAML(t, work, "Greet.", yaml, 180)
	wantWinner(t, out, stderr, "a")
	ws := filepath.Join(work, ".massgen", "workspaces", "run1", "a")
	wantFiles(t, ws, "custom_tools/_greet/greet.py", "custom_tools/_greet/TOOL.md", "massgen/tool/_result.py", "massgen/logger_config.py")
	noFiles(t, ws, "was copied", "custom_tools/_paid", "custom_tools/_computer_use", "custom_tools/workflow_toolkits")
	if !strings.Contains(stderr, "_paid (needs PAID_API_KEY)") {
		t.Errorf("no warning names the tool left out for its key:\n%s", stderr)
	}
	for _, k := range []string{"auto_discover_custom_tools", "exclude_custom_tools"} {
		if strings.Contains(stderr, "'"+k+"' is accepted but ignored") {
			t.Errorf("%s called ignored:\n%s", k, stderr)
		}
	}
	ev, err := os.ReadFile(filepath.Join(out.LogDir, "coordination_events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var system string
	for _, line := range strings.Split(string(ev), "\n") {
		if strings.Contains(line, `"type":"final_started"`) {
			system = line
		}
	}
	for _, want := range []string{"## Evolving Skills", "tasks/evolving_skill/SKILL.md", "Available Custom Tools", "**_greet**: Greets someone"} {
		if !strings.Contains(system, want) {
			t.Errorf("the presenter's system prompt lacks %q", want)
		}
	}
}
