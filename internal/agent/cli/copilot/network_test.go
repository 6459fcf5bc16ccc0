package copilot_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/agent/cli/clitest"
	"github.com/massgen/massgen/internal/agent/cli/copilot"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
)

func bwrapOrSkip(t *testing.T) string {
	t.Helper()
	bwrap, err := sandbox.Bwrap()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return bwrap
}

// With its network limited to its endpoints (as massgen runs a CLI agent
// by default), Copilot CLI does its turn through the relay — its model
// requests with the key massgen adds, its new_answer to the workflow
// server — while its shell tool cannot reach the provider's own address
// and never sees the key.
func TestNetworkLimitedToItsEndpoints(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	model := "cop-net-" + unique(t)
	args := `{"command":"bash probe.sh","description":"probe the network"}`
	sim, base := simtest.Start(t, "models:\n  "+model+":\n    steps:\n      - calls:\n          - {name: bash, arguments: '"+
		args+"'}\n      - answer: \"Probed.\"\n")
	u, _ := url.Parse(base)
	a := newAgent(t, base, model)
	probe := "(exec 3<>/dev/tcp/" + u.Hostname() + "/" + u.Port() + ") 2>/dev/null && echo REACHED || echo REFUSED; echo KEY=$COPILOT_PROVIDER_API_KEY\n"
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
	if len(tools) != 1 || tools[0].Tool != "bash" {
		t.Fatalf("tools %+v", tools)
	}
	res := tools[0].Result
	t.Logf("the shell tool in the sandbox: %s", res)
	if !strings.Contains(res, "REFUSED") || strings.Contains(res, "REACHED") {
		t.Errorf("the provider's own address was reachable: %s", res)
	}
	if strings.Contains(res, a.APIKey) {
		t.Errorf("the shell tool saw the key: %s", res)
	}
}

// Without a base_url Copilot CLI talks to GitHub's service, which is not
// one endpoint: with its network limited the task fails at once, saying
// what to set.
func TestNoBaseURLWithALimitedNetwork(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	a := newAgent(t, "", "cop-nobase-"+unique(t))
	g, err := workspace.New(workspace.Policy{Agent: a.ID, Workspace: a.Workdir})
	if err != nil {
		t.Fatal(err)
	}
	a.Network = clitest.Network(bwrap, g, a.Home)
	_, _, _, _, done := turn(t, a, agent.Task{Kind: agent.TaskPresent, User: question}, coord.Verdict{})
	if done.Failure == nil || !strings.Contains(done.Failure.Message, "base_url") {
		t.Fatalf("failure %+v, want one naming base_url", done.Failure)
	}
	var v cli.Vendor = copilot.Vendor{}
	if _, ok := v.(cli.DefaultEndpoint); ok {
		t.Error("Copilot CLI names a default endpoint, but GitHub's service is several hosts")
	}
}
