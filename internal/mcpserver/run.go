package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
)

// RunInput is massgen_run's arguments.
type RunInput struct {
	Question string   `json:"question" jsonschema:"the question or task for the team"`
	Config   string   `json:"config,omitempty" jsonschema:"the team: @examples/NAME or an example's name (massgen_examples lists them), the name of a config file in the server's config directory, or a MassGen config written as YAML text (a team of models only); default: the server's --config"`
	Models   []string `json:"models,omitempty" jsonschema:"instead of config: a team of these models, one agent each (backend inferred from the name, e.g. gpt-4o-mini, claude-sonnet-4-5, gemini-2.5-flash)"`
	// A pointer tells an absent timeout from a zero one, which is refused.
	TimeoutSeconds *float64 `json:"timeout_seconds,omitempty" jsonschema:"whole-run timeout in seconds (default: the config's)"`
}

// RunOutput is massgen_run's structured result.
type RunOutput struct {
	FinalAnswer string         `json:"final_answer" jsonschema:"the team's final answer"`
	Winner      string         `json:"winner,omitempty" jsonschema:"id of the agent whose answer won"`
	Status      string         `json:"status" jsonschema:"completed, timeout, failed or interrupted"`
	Error       string         `json:"error,omitempty" jsonschema:"why the run did not complete"`
	Fallback    string         `json:"fallback,omitempty" jsonschema:"why final_answer is the winner's stored answer rather than its final presentation"`
	Votes       map[string]int `json:"votes,omitempty" jsonschema:"votes per agent id in the final round"`
	LogDir      string         `json:"log_dir,omitempty" jsonschema:"the run's log directory (absent without logs)"`
	Usage       llm.Usage      `json:"usage" jsonschema:"tokens of every agent's requests, summed"`
	Cost        float64        `json:"cost" jsonschema:"cost of the run in USD, from the model catalogue"`
}

var runTool = &mcp.Tool{
	Name:  "massgen_run",
	Title: "Ask a massgen team",
	Description: "Runs a team of LLM agents on a question: each answers in parallel, sees the others' answers, " +
		"improves on them or votes for the best; the most-voted answer's author writes the final answer, returned " +
		"as text (structured content adds the winner, votes, token usage, cost and the log directory). Slow: " +
		"minutes. Progress notifications describe each coordination step. A run that does not complete is an " +
		"error result naming its status and reason.",
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, OpenWorldHint: ptr(true)},
}

func ptr[T any](v T) *T { return &v }

// run is massgen_run's handler.
func (s *Server) run(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, *RunOutput, error) {
	rq, shown, err := s.request(in)
	if err != nil {
		return nil, nil, err
	}
	// The session cancels ctx when the client cancels the call or goes
	// away; Close cancels it when the server stops.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.stop, cancel)()
	if token := req.Params.GetProgressToken(); token != nil {
		rq.ObserveSkips = slices.Concat(event.Deltas, event.Bookkeeping)
		rq.Observe = func(sub *event.Subscription, info app.RunInfo) {
			notifyProgress(ctx, req.Session, token, sub, s.env.Stderr)
		}
	}
	env := s.env
	out, err := app.Execute(ctx, &env, rq)
	if err != nil {
		if !shown {
			err = withhold(err, cmp.Or(rq.Config, inlineName))
		}
		return nil, nil, err // a tool error: the config or the request must change
	}
	r := out.Result
	res := &RunOutput{FinalAnswer: r.Final, Winner: r.Winner, Status: string(r.Status), Fallback: r.Fallback,
		Votes: r.Tally, LogDir: out.LogDir, Usage: r.TotalUsage(), Cost: r.TotalCost()}
	if r.Status == orchestrator.Completed {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Final}}}, res, nil
	}
	reason := "no reason given"
	if r.Err != nil {
		reason = r.Err.Error()
	}
	res.Error = reason
	msg := fmt.Sprintf("massgen run %s: %s", r.Status, reason)
	if out.LogDir != "" {
		msg += " (logs: " + out.LogDir + ")"
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, res, nil
}

// request turns a call's arguments into a run. shown is false when the
// run's config errors must be withheld (configs.go).
func (s *Server) request(in RunInput) (rq app.Request, shown bool, err error) {
	rq = app.Request{Question: in.Question, Team: app.Team{Teams: s.teams}, Logging: app.Logging{NoLogs: s.o.NoLogs, LogDir: s.o.LogDir, Args: []string{"mcp"}}}
	if strings.TrimSpace(in.Question) == "" {
		return rq, true, errors.New("question is empty: ask the team something")
	}
	if in.TimeoutSeconds != nil {
		if _, err := config.Seconds("timeout_seconds", *in.TimeoutSeconds); err != nil {
			return rq, true, err
		}
		rq.Timeout = *in.TimeoutSeconds
	}
	shown = true
	switch {
	case in.Config != "" && len(in.Models) > 0:
		return rq, true, errors.New("config and models both choose the team: give one")
	case len(in.Models) > 0:
		agents, err := app.ModelAgents(in.Models, s.env.Getenv)
		if err != nil {
			return rq, true, err
		}
		rq.Agents = agents
	default:
		src, err := s.source(in.Config)
		if err != nil {
			return rq, true, err
		}
		rq.Config, rq.ConfigYAML, shown = src.config, src.yaml, src.shown
		if src.yaml != nil {
			rq.ConfigName = inlineName
		}
	}
	return rq, shown, nil
}

// notifyProgress sends each coordination step of a run as a progress
// notification, numbered from 1, until the run's events end; an agent's
// tool reporting progress (an MCP tool of the team) is a step too. A client that
// does not read them does not hold the run back: a failed notification is
// dropped, and the events keep being consumed.
func notifyProgress(ctx context.Context, ss *mcp.ServerSession, token any, sub *event.Subscription, stderr io.Writer) {
	step := 0
	var ticks event.TickThrottle // a tool's own progress, thinned as the plain display thins it
	for {
		e, ok := sub.Next(nil)
		if !ok {
			return
		}
		if w, ok := e.(event.Warning); ok && stderr != nil {
			fmt.Fprintln(stderr, w.Line()) // the server's log, as for a run without progress
		}
		msg := event.Describe(e)
		if msg == "" || ctx.Err() != nil || !ticks.Show(e) {
			continue
		}
		step++
		_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(step), Message: msg})
	}
}
