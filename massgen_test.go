package massgen_test

import (
	"context"
	"strings"
	"testing"

	"github.com/massgen/massgen"
)

func TestRunOnTheSimulator(t *testing.T) {
	res, err := massgen.Run(context.Background(), "What is the capital of France?", massgen.Options{
		Config: "@examples/sim_three_agents", NoLogs: true, WorkDir: t.TempDir(),
		Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "completed" || res.Winner == "" || !strings.Contains(res.Answer, "Final answer") || res.Votes[res.Winner] == 0 {
		t.Fatalf("unexpected result: %+v", res)
	}
}

func TestRunReportsConfigErrors(t *testing.T) {
	_, err := massgen.Run(context.Background(), "q", massgen.Options{Config: "missing.yaml", WorkDir: t.TempDir(),
		Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "config file not found") {
		t.Fatalf("err = %v", err)
	}
}
