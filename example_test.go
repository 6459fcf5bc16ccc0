package massgen_test

import (
	"context"
	"fmt"

	"github.com/massgen/massgen"
)

// A run on the built-in simulator: no API key needed.
func ExampleRun() {
	res, err := massgen.Run(context.Background(), "What is the capital of France?", massgen.Options{
		Config: "@examples/sim_three_agents",
		NoLogs: true,
	})
	if err != nil {
		fmt.Println("cannot start:", err)
		return
	}
	fmt.Println(res.Status, res.Winner, res.Votes[res.Winner])
	// Output: completed researcher 3
}

// Events arrive while the run goes; the result comes after the last one.
func ExampleStream() {
	events, result := massgen.Stream(context.Background(), "What is the capital of France?", massgen.Options{
		Config: "@examples/sim_three_agents",
		NoLogs: true,
	})
	answers := 0
	for e := range events {
		switch e.Type {
		case "new_answer":
			answers++
		case "winner_selected":
			fmt.Printf("%d answers; winner %s\n", answers, e.Agent)
		}
	}
	res, err := result()
	if err != nil {
		fmt.Println("cannot start:", err)
		return
	}
	fmt.Println(res.Status)
	// Output:
	// 3 answers; winner researcher
	// completed
}

// A team described in code, here two simulated agents.
func ExampleAgentSpec() {
	res, err := massgen.Run(context.Background(), "Name a prime number.", massgen.Options{
		Agents: []massgen.AgentSpec{
			{ID: "alpha", Backend: "sim", Model: "sim-alpha", SystemMessage: "Be brief."},
			{ID: "beta", Model: "sim-beta"}, // the backend is inferred from the model
		},
		NoLogs: true,
	})
	if err != nil {
		fmt.Println("cannot start:", err)
		return
	}
	fmt.Println(res.Status, len(res.Usage))
	// Output: completed 2
}
