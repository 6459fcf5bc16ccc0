package workflowmcp_test

import (
	"context"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/workflowmcp"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/orchestrator"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tokenTransport adds the bearer token, as a CLI's MCP configuration does.
type tokenTransport struct{ token string }

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect is an MCP client's session with the server at url, made as a
// CLI's MCP configuration makes it: with the bearer token.
func connect(ctx context.Context, url, token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "fake-cli", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: tokenTransport{token}}, DisableStandaloneSSE: true}, nil)
}

// toolNames are the names of the tools sess is offered.
func toolNames(ctx context.Context, sess *mcp.ClientSession) ([]string, error) {
	list, err := sess.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	return names, nil
}

// overMCP plays a coordination turn as an agent with its own tool loop
// does: turn works with an MCP session with srv at url (made with the
// bearer token) for the turn.
func overMCP(ctx context.Context, srv *workflowmcp.Server, url string, task agent.Task, inbox *agent.Inbox,
	turn func(context.Context, *mcp.ClientSession) error) iter.Seq[agent.Outcome] {
	return srv.Run(ctx, task, inbox, func(ctx context.Context, emit func(agent.Outcome)) error {
		sess, err := connect(ctx, url, srv.Token())
		if err != nil {
			return err
		}
		defer sess.Close()
		return turn(ctx, sess)
	})
}

// presents is a task that answers text.
func presents(text string) iter.Seq[agent.Outcome] {
	return func(yield func(agent.Outcome) bool) {
		if yield(agent.Text{Text: text}) {
			yield(agent.Done{Text: text})
		}
	}
}

// text is a tool result's text.
func text(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

// runTeam runs question with impl, an agent with its own tool loop, as
// agent "cli" and simulated agents sims (on a simulator of the test's)
// beside it, under opts' settings, for 30 s at the most; its events go to
// opts.Events (a broker of its own when nil), closed at the end.
func runTeam(t *testing.T, impl agent.Agent, sims []string, question string, opts orchestrator.Options) *orchestrator.Result {
	t.Helper()
	_, simURL := simtest.Start(t, "")
	opts.Agents = []orchestrator.Agent{{ID: "cli", Backend: "external", Impl: impl}}
	for _, id := range sims {
		opts.Agents = append(opts.Agents, orchestrator.Agent{ID: id, Backend: "sim", ModelName: "sim-" + id, Simulated: true,
			Model: chatcompat.New(chatcompat.Options{Provider: "sim", BaseURL: simURL, APIKey: "sim", Model: "sim-" + id, Stream: true})})
	}
	if opts.Events == nil {
		opts.Events = event.NewBroker()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res := orchestrator.Run(ctx, question, opts)
	opts.Events.Close()
	return res
}

// external is an agent with its own tool loop: each turn it connects to
// the workflow server as an MCP client over HTTP — what a coding-agent
// CLI does — looks at the tools offered, and calls one; then it ends, or
// (linger) goes on working until the turn's end stops it.
type external struct {
	srv     *workflowmcp.Server
	url     string
	answer  string
	linger  bool
	mu      sync.Mutex
	results []string
	stopped int
	offered [][]string
}

func (e *external) Run(ctx context.Context, task agent.Task, inbox *agent.Inbox) iter.Seq[agent.Outcome] {
	if task.Kind != agent.TaskCoordinate {
		return presents("Paris (external).")
	}
	return overMCP(ctx, e.srv, e.url, task, inbox, func(ctx context.Context, sess *mcp.ClientSession) error {
		names, err := toolNames(ctx, sess)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.offered = append(e.offered, names)
		e.mu.Unlock()
		call := &mcp.CallToolParams{Name: "new_answer", Arguments: map[string]any{"content": e.answer}}
		for _, a := range task.Answers {
			if a.Content == e.answer {
				call = &mcp.CallToolParams{Name: "vote", Arguments: map[string]any{"agent_id": a.Label, "reason": "mine is complete"}}
			}
		}
		if call.Name == "vote" && slices.Contains(names, "submit_checklist") {
			// Checklist-gated: score every answer first (its own best).
			scores := map[string]any{}
			for _, a := range task.Answers {
				s := 5
				if a.Content == e.answer {
					s = 10
				}
				scores[a.Label] = map[string]any{"E1": s, "E2": s, "E3": s, "E4": s}
			}
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "submit_checklist", Arguments: map[string]any{"scores": scores}})
			if err != nil {
				return err
			}
			e.mu.Lock()
			e.results = append(e.results, text(res))
			e.mu.Unlock()
		}
		res, err := sess.CallTool(ctx, call)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.results = append(e.results, text(res))
		e.mu.Unlock()
		if e.linger {
			<-ctx.Done() // it would go on: the end of the turn stops it
			e.mu.Lock()
			e.stopped++
			e.mu.Unlock()
		}
		return nil
	})
}

// An agent that brings its own tool loop takes part in a full run through
// agent.Agent, with the workflow tools served to it over MCP: its answer
// is accepted, it votes, it wins and presents; each turn's client is
// stopped once its action is decided.
func TestAnAgentWithItsOwnToolLoopTakesPartOverMCP(t *testing.T) {
	for _, linger := range []bool{false, true} {
		t.Run(map[bool]string{false: "ends after its call", true: "stopped after the grace"}[linger], func(t *testing.T) {
			testOwnToolLoop(t, linger)
		})
	}
}

func testOwnToolLoop(t *testing.T, linger bool) {
	srv := workflowmcp.New()
	srv.Grace = 100 * time.Millisecond
	url, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ext := &external{srv: srv, url: url, answer: "Paris is the capital of France.", linger: linger}
	res := runTeam(t, ext, []string{"b", "c"}, "What is the capital of France?", orchestrator.Options{})
	if res.Status != orchestrator.Completed || res.Winner != "cli" || res.Final != "Paris (external)." {
		t.Fatalf("status %s, winner %q, final %q (%v)", res.Status, res.Winner, res.Final, res.Err)
	}
	ext.mu.Lock()
	defer ext.mu.Unlock()
	// Its own vote is among the three: it voted through the tool too. (The
	// last vote ends the run, and the run's end may stop the agent before
	// it reads that result, so only the first result is certain.)
	if len(ext.results) == 0 || !strings.HasPrefix(ext.results[0], "Answer recorded as agent1") {
		t.Errorf("tool results the agent read: %q, want its answer recorded first", ext.results)
	}
	if !slices.Equal(ext.offered[0], []string{"new_answer"}) || !slices.Contains(ext.offered[len(ext.offered)-1], "vote") {
		t.Errorf("tools offered per turn: %v, want new_answer alone first, then vote too", ext.offered)
	}
	if linger && ext.stopped == 0 {
		t.Error("an agent that kept working after its decided call was never stopped")
	}
	if res.Tally["cli"] != 3 {
		t.Errorf("tally %v", res.Tally)
	}
}

// The endpoint refuses a request without its token, and a call made
// while no turn is bound is refused and recorded nowhere.
func TestTheEndpointNeedsItsTokenAndATurn(t *testing.T) {
	srv := workflowmcp.New()
	url, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", resp.StatusCode)
	}
	ctx := t.Context()
	sess, err := connect(ctx, url, srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "new_answer", Arguments: map[string]any{"content": "x"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "No coordination turn") {
		t.Errorf("a call between turns: %+v, %v", res, err)
	}
}

// A checklist-gated agent with its own tool loop is offered
// submit_checklist over MCP once answers exist; an accepted checklist is a
// step of its turn, not its end, and its vote then counts.
func TestAnAgentWithItsOwnToolLoopSubmitsAChecklist(t *testing.T) {
	srv := workflowmcp.New()
	url, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ext := &external{srv: srv, url: url, answer: "Paris is the capital of France."}
	res := runTeam(t, ext, []string{"b", "c"}, "What is the capital of France?",
		orchestrator.Options{Settings: coord.Settings{Checklist: &coord.Checklist{Agents: []string{"cli"}}}})
	if res.Status != orchestrator.Completed || res.Winner != "cli" || res.Tally["cli"] != 3 {
		t.Fatalf("status %s, winner %q, tally %v (%v)", res.Status, res.Winner, res.Tally, res.Err)
	}
	ext.mu.Lock()
	defer ext.mu.Unlock()
	if !slices.ContainsFunc(ext.results, func(r string) bool { return strings.HasPrefix(r, "Checklist accepted. Verdict: vote for agent1") }) {
		t.Errorf("results the agent read: %q, want its checklist accepted", ext.results)
	}
	if !slices.Contains(ext.offered[len(ext.offered)-1], "submit_checklist") || slices.Contains(ext.offered[0], "submit_checklist") {
		t.Errorf("tools offered per turn: %v, want submit_checklist once answers exist", ext.offered)
	}
}
