package workflowmcp

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/tool"
)

// Evaluate plays one post-evaluation task (agent.TaskEvaluate) of an agent
// with its own tool loop, as the LLM agent's post-evaluation does with its
// model: the server offers submit and restart_orchestration (and not the
// coordination tools), and the agent's first call of either is its
// verdict on the final answer. The agent then has Grace to end before it
// is stopped, and the task ends with Done.Evaluation. An agent that ends
// without calling either submits, as any evaluation that says nothing
// does; one that fails ends with its failure and no evaluation, which the
// orchestrator counts as submit too (an evaluation problem must not throw
// away a good answer).
func (s *Server) Evaluate(ctx context.Context, task agent.Task, loop Loop) iter.Seq[agent.Outcome] {
	return func(yield func(agent.Outcome) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		decided := make(chan agent.Evaluation, 1)
		var once sync.Once
		defer s.bind(s.setEvalTools, nil, func(ev agent.Evaluation) bool {
			first := false
			once.Do(func() { decided <- ev; first = true })
			return first
		})()

		var q queue
		q.init()
		var done agent.Done
		flush := func() bool { return q.relay(&done, yield) }
		loopDone := make(chan error, 1)
		go func() { loopDone <- loop(ctx, q.put) }()
		stop := func() { cancel(); <-loopDone }
		finish := func(ev agent.Evaluation) {
			ev.Usage = done.Usage
			done.Evaluation = &ev
			yield(done)
		}
		for {
			select {
			case <-q.ready:
				if !flush() {
					stop()
					return
				}
			case ev := <-decided:
				if s.windDown(&q, loopDone, flush, stop) {
					finish(ev)
				}
				return
			case err := <-loopDone:
				if !flush() {
					return
				}
				select {
				case ev := <-decided: // called, then ended at once
					finish(ev)
					return
				default:
				}
				if ctx.Err() != nil && err == nil {
					err = ctx.Err()
				}
				if err != nil {
					done.Failure = agent.FailureOf(err, "", "", "")
					yield(done)
					return
				}
				finish(agent.Evaluation{})
				return
			}
		}
	}
}

// setEvalTools offers submit and restart_orchestration only.
func (s *Server) setEvalTools() {
	s.mcp.RemoveTools(coord.ToolNewAnswer, coord.ToolVote)
	s.mcp.AddTool(mcpTool(tool.Submit()), s.evalHandler(false))
	s.mcp.AddTool(mcpTool(tool.Restart()), s.evalHandler(true))
}

// evalHandler records a post-evaluation call as the bound evaluation's
// verdict. A restart needs its reason: without one the model is told to
// call again, as a malformed workflow call is.
func (s *Server) evalHandler(restart bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.mu.Lock()
		record := s.record
		s.mu.Unlock()
		if record == nil {
			return errorResult("No post-evaluation is in progress: this call was not recorded."), nil
		}
		var ev agent.Evaluation
		if restart {
			var args struct {
				Reason       string `json:"reason"`
				Instructions string `json:"instructions"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || strings.TrimSpace(args.Reason) == "" {
				return errorResult(errRestartArgs.Error()), nil
			}
			ev = agent.Evaluation{Restart: true, Reason: strings.TrimSpace(args.Reason), Instructions: strings.TrimSpace(args.Instructions)}
		}
		if !record(ev) {
			return text("Your evaluation was already recorded; this call was not counted, and the turn is over."), nil
		}
		if restart {
			return text("Restart recorded: coordination runs again with your reason and instructions, and the turn is over."), nil
		}
		return text("Submission recorded: the final answer stands, and the turn is over."), nil
	}
}

var errRestartArgs = errors.New("restart_orchestration needs a reason (what is wrong with the final answer) and instructions " +
	"(what the next attempt must do), as a JSON object; call it again, or call submit if the final answer stands")

func text(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
