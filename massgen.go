// Package massgen runs a team of LLM agents that answer the same question in
// parallel, refine each other's answers and vote; the answer the team
// converges on is returned. It is the Go equivalent of Python's
// `massgen.run`, and reads MassGen's YAML configs unchanged.
//
//	res, err := massgen.Run(ctx, "What is the capital of France?", massgen.Options{
//		Config: "@examples/sim_three_agents", // or a path to a MassGen YAML file
//	})
//	if err != nil { … }            // config or setup problem
//	fmt.Println(res.Status, res.Answer)
//
// The command-line tool (cmd/massgen) is a thin layer over the same code.
package massgen

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/massgen/massgen/internal/cli"
	"github.com/massgen/massgen/internal/llm"
)

// Options choose the team and where the run keeps its logs.
type Options struct {
	// Config is a MassGen YAML/JSON file or "@examples/NAME". Empty means:
	// Model if set, else ./.massgen/config.yaml, ~/.config/massgen/config.yaml,
	// else a team built from the API keys found in the environment.
	Config string
	// Model runs a single agent on this model (backend inferred, or Backend).
	Model, Backend, BaseURL, SystemMessage string
	// Timeout overrides the config's whole-run timeout.
	Timeout time.Duration
	// NoLogs skips the log directory; LogDir changes its root
	// (default ./.massgen/massgen_logs).
	NoLogs bool
	LogDir string
	// Getenv reads the environment (default os.Getenv); .env files are read too.
	Getenv func(string) string
	// WorkDir is where relative paths resolve (default the current directory).
	WorkDir string
	// Warnings receives config warnings (default discarded).
	Warnings io.Writer
}

// Status is how a run ended: "completed", "timeout" (no answer before the
// deadline), "failed" (every agent failed) or "interrupted" (ctx cancelled).
type Status string

// Result is what a run produced.
type Result struct {
	Status   Status
	Answer   string         // the final answer ("" unless completed)
	Winner   string         // id of the agent whose answer won
	How      string         // how the winner was chosen
	Votes    map[string]int // votes per agent id in the final round
	Usage    map[string]llm.Usage
	Duration time.Duration
	LogDir   string // "" with NoLogs
	Err      error  // why the run did not complete, if it did not
}

// Run coordinates the team on question. The error is for problems before
// the run starts (bad config, missing API key); how the run itself ended is
// in Result.Status and Result.Err.
func Run(ctx context.Context, question string, o Options) (*Result, error) {
	env := &cli.Env{Getenv: o.Getenv, Stdout: io.Discard, Stderr: o.Warnings, WorkDir: o.WorkDir}
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	out, err := cli.Execute(ctx, env, cli.Request{
		Question: question, Config: o.Config, Model: o.Model, Backend: o.Backend, BaseURL: o.BaseURL,
		SystemMessage: o.SystemMessage, Timeout: o.Timeout.Seconds(), NoLogs: o.NoLogs, LogDir: o.LogDir,
	})
	if err != nil {
		return nil, err
	}
	r := out.Result
	return &Result{Status: Status(r.Status), Answer: r.Final, Winner: r.Winner, How: r.How, Votes: r.Tally,
		Usage: r.Usage, Duration: r.Duration, LogDir: out.LogDir, Err: r.Err}, nil
}
