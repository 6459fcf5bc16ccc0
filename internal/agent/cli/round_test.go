package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/tool"
)

// sleeper is a CLI that works until it is stopped. Each invocation is
// sent to seen.
type sleeper struct{ seen chan cli.Invocation }

func (sleeper) Type() string    { return "sleeper" }
func (sleeper) Program() string { return "sh" }
func (s sleeper) Prepare(inv *cli.Invocation) (cli.Command, error) {
	s.seen <- *inv
	return cli.Command{Args: []string{"-c", "exec sleep 60"}}, nil
}
func (sleeper) Decoder() cli.Decoder { return nothing{} }

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// callTool calls a tool of the server inv hands the CLI as its own tools,
// as the CLI would.
func callTool(t *testing.T, inv cli.Invocation, name string) *mcp.CallToolResult {
	t.Helper()
	var srv *cli.MCPServer
	for i := range inv.MCPServers {
		if inv.MCPServers[i].Name == cli.ToolsServer {
			srv = &inv.MCPServers[i]
		}
	}
	if srv == nil {
		t.Fatalf("the CLI was not handed its tools' server: %+v", inv.MCPServers)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	token := strings.TrimPrefix(srv.Headers["Authorization"], "Bearer ")
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "fake-cli", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// A CLI agent's own massgen tools run in its task's context (a subagent's
// spend is charged to the task), the soft round limit's message rides on
// the next result of one of them, and the hard limit stops the CLI at
// once and starts it again with the task's prompt and the messages, only
// the workflow tools handed to it, its own tools refused meanwhile.
func TestRoundTimeReachesACLIAgentMidTurn(t *testing.T) {
	seen := make(chan cli.Invocation, 4)
	charged := make(chan bool, 4)
	probe := tool.Func(llm.ToolDef{Name: "probe", Parameters: map[string]any{"type": "object"}},
		func(ctx context.Context, _ json.RawMessage) (string, error) {
			charged <- tool.ChargeOf(ctx) != nil
			return "probed", nil
		})
	a := &cli.Agent{ID: "cc", Vendor: sleeper{seen}, Path: "/bin/sh", Workdir: t.TempDir(), Home: t.TempDir(),
		Tools: []tool.Tool{probe}}
	defer a.Close()
	inbox := agent.NewInbox()
	ctx, cancel := context.WithCancel(tool.WithCharge(t.Context(), func(llm.Usage, float64) bool { return true }))
	defer cancel()
	ended := make(chan agent.Done, 1)
	go func() {
		var done agent.Done
		for o := range a.Run(ctx, agent.Task{Kind: agent.TaskCoordinate, User: "What is 2+2?"}, inbox) {
			if d, ok := o.(agent.Done); ok {
				done = d
			}
		}
		ended <- done
	}()
	first := <-seen
	if res := callTool(t, first, "probe"); resultText(res) != "probed" || !<-charged {
		t.Fatalf("before any limit: %q (the task's charge function reached the tool: see above)", resultText(res))
	}

	const soft, hard = "ROUND TIME LIMIT APPROACHING: wrap up", "HARD ROUND TIMEOUT: only vote or new_answer"
	inbox.Post(agent.WrapUp{Message: soft})
	deadline := time.Now().Add(10 * time.Second)
	var got string
	for time.Now().Before(deadline) && !strings.Contains(got, soft) {
		got = resultText(callTool(t, first, "probe"))
		<-charged
	}
	if !strings.HasPrefix(got, "probed") || !strings.Contains(got, soft) {
		t.Fatalf("after the soft limit the tool's result is %q; want its own result, then the wrap-up message", got)
	}
	if again := resultText(callTool(t, first, "probe")); strings.Contains(again, soft) {
		t.Errorf("the wrap-up message came twice: %q", again)
	}
	select {
	case inv := <-seen:
		t.Fatalf("the soft limit restarted the CLI: %+v", inv)
	default:
	}

	inbox.Post(agent.WrapUp{Hard: true, Message: hard})
	var second cli.Invocation
	select {
	case second = <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the hard limit did not restart the CLI")
	}
	if !second.WorkflowOnly || !strings.HasPrefix(second.Prompt, "What is 2+2?") || !strings.Contains(second.Prompt, hard) {
		t.Errorf("restarted with workflow only %v and prompt %q; want the task's prompt and the hard limit's message", second.WorkflowOnly, second.Prompt)
	}
	if len(second.MCPServers) != 0 || second.Workflow == nil {
		t.Errorf("restarted with MCP servers %+v and workflow %v; want the workflow server alone", second.MCPServers, second.Workflow)
	}
	if res := callTool(t, first, "probe"); !res.IsError || !strings.Contains(resultText(res), "HARD ROUND TIMEOUT") {
		t.Errorf("a call of its own tool after the hard limit gave %q; want it refused", resultText(res))
	}
	// The task ends (here: cancelled), and with it the tools' binding.
	cancel()
	select {
	case d := <-ended:
		if d.Failure == nil {
			t.Errorf("the cancelled turn ended without a failure")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not end when cancelled")
	}
	if res := callTool(t, first, "probe"); !res.IsError || !strings.Contains(resultText(res), "No task") {
		t.Errorf("a call between tasks gave %q; want it refused", resultText(res))
	}
}
