package geminicli_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/agent/cli/geminicli"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

// With its network limited to its endpoints (as massgen runs a CLI agent
// by default), Gemini CLI does its turn through the relay — its model
// requests with the key massgen adds, its new_answer to the workflow
// server — while its shell tool cannot reach the provider's own address
// and holds only a stand-in for the key.
func TestNetworkLimitedToItsEndpoints(t *testing.T) {
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	model := "gem-net-" + unique(t)
	// The probe, a script in the workspace (Gemini CLI's shell tool
	// refuses command substitution), tries the simulator's own address,
	// known once it runs.
	args := `{"command":"bash probe.sh","description":"probe the network"}`
	sim, base := simtest.Start(t, "models:\n  "+model+":\n    steps:\n      - calls:\n          - {name: run_shell_command, arguments: '"+
		args+"'}\n      - answer: \"Probed.\"\n")
	u, _ := url.Parse(base)
	a := newAgent(t, base, model)
	probe := "(exec 3<>/dev/tcp/" + u.Hostname() + "/" + u.Port() + ") 2>/dev/null && echo REACHED || echo REFUSED; echo KEY=$GEMINI_API_KEY\n"
	if err := os.WriteFile(filepath.Join(a.Workdir, "probe.sh"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := workspace.New(workspace.Policy{Agent: a.ID, Workspace: a.Workdir})
	if err != nil {
		t.Fatal(err)
	}
	a.Network = clitest.Network(bwrap, g, a.Home)
	props, _, tools, _, done := turn(t, a, agent.Task{Kind: agent.TaskCoordinate, System: "Probe.", User: question},
		coord.Verdict{Outcome: coord.Accepted, Label: "agent1"})
	if done.Failure != nil {
		t.Fatalf("failure: %+v (requests %q)", done.Failure, steps(sim.Requests()))
	}
	if len(props) != 1 || props[0].Action.Content != "Probed." {
		t.Fatalf("proposals %+v", props)
	}
	if len(tools) != 1 || tools[0].Tool != "run_shell_command" {
		t.Fatalf("tools %+v", tools)
	}
	res := tools[0].Result
	t.Logf("the shell tool in the sandbox: %s", res)
	if !strings.Contains(res, "REFUSED") || strings.Contains(res, "REACHED") {
		t.Errorf("the provider's own address was reachable: %s", res)
	}
	if strings.Contains(res, "KEY="+a.APIKey) || !strings.Contains(res, "KEY=massgen-sandbox-key-") {
		t.Errorf("the CLI's key is not the stand-in: %s", res)
	}
}

// Gemini CLI's default endpoint is named, so its network can be limited
// to it without a base_url.
func TestDefaultEndpoint(t *testing.T) {
	var v cli.Vendor = geminicli.Vendor{}
	if d, ok := v.(cli.DefaultEndpoint); !ok || d.DefaultBaseURL() != "https://generativelanguage.googleapis.com" {
		t.Errorf("default endpoint %v", d)
	}
}
