package cli_test

import (
	"testing"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
)

// quitter is a CLI that exits at once with status 3, having done nothing.
type quitter struct{}

func (quitter) Type() string    { return "quitter" }
func (quitter) Program() string { return "sh" }
func (quitter) Prepare(*cli.Invocation) (cli.Command, error) {
	return cli.Command{Args: []string{"-c", "echo 'no key, no luck' >&2; exit 3"}}, nil
}
func (quitter) Decoder() cli.Decoder { return nothing{} }

type nothing struct{}

func (nothing) Line([]byte) []agent.Outcome { return nil }
func (nothing) End() cli.Result             { return cli.Result{} }

// A CLI that fails a coordination turn without an action fails it with
// the agent, its CLI and its model named, how it exited and its last
// words, like any agent's failure.
func TestAFailedCLITurnNamesItsAgent(t *testing.T) {
	a := &cli.Agent{ID: "cc", Vendor: quitter{}, Path: "/bin/sh", Model: "m1", Workdir: t.TempDir(), Home: t.TempDir()}
	defer a.Close()
	var done agent.Done
	for o := range a.Run(t.Context(), agent.Task{Kind: agent.TaskCoordinate, User: "What is 2+2?"}, agent.NewInbox()) {
		if d, ok := o.(agent.Done); ok {
			done = d
		}
	}
	f := done.Failure
	if f == nil {
		t.Fatal("the turn did not fail")
	}
	if f.Agent != "cc" || f.Provider != "quitter" || f.Model != "m1" {
		t.Errorf("failure %#v", *f)
	}
	if want := "exit status 3: no key, no luck"; !contains(f.Message, want) {
		t.Errorf("message %q does not say %q", f.Message, want)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
