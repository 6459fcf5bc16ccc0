package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/app"
	"github.com/massgen/massgen/internal/mcpserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client is a go-sdk client session on a massgen MCP server, with the
// progress notifications it received.
type client struct {
	*mcp.ClientSession
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

func (c *client) steps() []*mcp.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.progress)
}

// transports are the two ways a client reaches the server: a session over
// an in-memory pipe (what stdio carries) and streamable HTTP on 127.0.0.1.
var transports = []struct {
	name    string
	connect func(t *testing.T, s *mcpserver.Server) mcp.Transport
}{
	{"in-memory", func(t *testing.T, s *mcpserver.Server) mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(t.Context(), st)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		return ct
	}},
	{"streamable-http", func(t *testing.T, s *mcpserver.Server) mcp.Transport {
		hs := httptest.NewServer(s.Handler(mcpserver.HTTPOptions{APIKey: testKey})) // 127.0.0.1
		t.Cleanup(hs.Close)
		return &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: withKey(hs.Client(), testKey)}
	}},
}

const testKey = "test-key-0123456789"

// withKey is c sending "Authorization: Bearer key" with every request.
func withKey(c *http.Client, key string) *http.Client {
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+key)
		return base.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// newServer is a server whose runs see no API key and no config but the
// test's, and log under a directory of the test's.
func newServer(t *testing.T, o mcpserver.Options) *mcpserver.Server {
	t.Helper()
	work := t.TempDir()
	env := &app.Env{Getenv: func(string) string { return "" }, WorkDir: work, Stderr: io.Discard}
	if o.LogDir == "" && !o.NoLogs {
		o.LogDir = filepath.Join(work, "logs")
	}
	s := mcpserver.New(env, o)
	t.Cleanup(s.Close)
	return s
}

func connect(t *testing.T, tr mcp.Transport) *client {
	t.Helper()
	c := &client{}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, r.Params)
			c.mu.Unlock()
		},
	})
	cs, err := cl.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	c.ClientSession = cs
	return c
}

func ctx30(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// call calls massgen_run, asking for progress.
func call(ctx context.Context, t *testing.T, c *client, args map[string]any) (*mcp.CallToolResult, mcpserver.RunOutput) {
	t.Helper()
	p := &mcp.CallToolParams{Name: "massgen_run", Arguments: args}
	p.SetProgressToken("run-1")
	res, err := c.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("massgen_run is a protocol error, not a tool result: %v", err)
	}
	var out mcpserver.RunOutput
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("structured content %s: %v", data, err)
		}
	}
	return res, out
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestListsItsTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := connect(t, tr.connect(t, newServer(t, mcpserver.Options{})))
			res, err := c.ListTools(ctx30(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				if tool.Name != "massgen_run" {
					continue
				}
				schema, _ := json.Marshal(tool.InputSchema)
				var s struct {
					Required   []string
					Properties map[string]any
				}
				_ = json.Unmarshal(schema, &s)
				if !slices.Equal(s.Required, []string{"question"}) {
					t.Errorf("massgen_run requires %v, want [question]", s.Required)
				}
				for _, p := range []string{"question", "config", "models", "timeout_seconds"} {
					if s.Properties[p] == nil {
						t.Errorf("massgen_run has no input %q: %s", p, schema)
					}
				}
				if tool.OutputSchema == nil {
					t.Error("massgen_run declares no output schema")
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"massgen_examples", "massgen_run"}) {
				t.Errorf("tools = %v", names)
			}
		})
	}
}

func TestRunsATeamAndReportsEachStep(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := connect(t, tr.connect(t, newServer(t, mcpserver.Options{})))
			res, out := call(ctx30(t), t, c, map[string]any{"question": "What is the capital of France?", "config": "@examples/sim_three_agents"})
			if res.IsError {
				t.Fatalf("error result: %s", text(res))
			}
			if text(res) == "" || text(res) != out.FinalAnswer {
				t.Errorf("text %q is not the final answer %q", text(res), out.FinalAnswer)
			}
			if out.Status != "completed" || !slices.Contains([]string{"researcher", "critic", "writer"}, out.Winner) {
				t.Errorf("status %q, winner %q", out.Status, out.Winner)
			}
			if out.Votes[out.Winner] == 0 || out.Usage.OutputTokens == 0 {
				t.Errorf("votes %v, usage %+v", out.Votes, out.Usage)
			}
			status, err := os.ReadFile(filepath.Join(out.LogDir, "status.json"))
			if err != nil || !strings.Contains(string(status), `"completed"`) {
				t.Errorf("log_dir %q: status.json %s (%v)", out.LogDir, status, err)
			}
			answer, _ := os.ReadFile(filepath.Join(out.LogDir, "final", out.Winner, "answer.txt"))
			if strings.TrimSpace(string(answer)) != strings.TrimSpace(out.FinalAnswer) {
				t.Errorf("the log's final answer %q differs from the result's", answer)
			}

			// Every step arrives before the result, numbered 1, 2, 3, …
			steps := c.steps()
			var said []string
			for i, p := range steps {
				if p.ProgressToken != "run-1" || p.Progress != float64(i+1) || p.Message == "" {
					t.Errorf("progress %d: %+v", i, p)
				}
				said = append(said, p.Message)
			}
			all := strings.Join(said, "\n")
			for _, want := range []string{"run started: 3 agents", " voted for ", "winner: " + out.Winner, "run completed"} {
				if !strings.Contains(all, want) {
					t.Errorf("no progress says %q:\n%s", want, all)
				}
			}
		})
	}
}

func TestRunsATeamOfModelsOrAnExampleByName(t *testing.T) {
	c := connect(t, transports[0].connect(t, newServer(t, mcpserver.Options{NoLogs: true, Config: "@examples/sim_three_agents"})))
	for _, tt := range []struct {
		name    string
		args    map[string]any
		winners []string
	}{
		{"models, one agent each", map[string]any{"models": []string{"sim-one", "sim-two"}}, []string{"sim-one", "sim-two"}},
		{"an example by its bare name", map[string]any{"config": "sim_single_agent"}, []string{"solo"}},
		{"the server's default team", map[string]any{}, []string{"researcher", "critic", "writer"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.args["question"] = "What is the capital of France?"
			res, out := call(ctx30(t), t, c, tt.args)
			if res.IsError || !slices.Contains(tt.winners, out.Winner) || out.LogDir != "" {
				t.Errorf("error %v, winner %q (want one of %v), log_dir %q: %s", res.IsError, out.Winner, tt.winners, out.LogDir, text(res))
			}
		})
	}
}

func TestABadCallIsAToolErrorThatSaysWhy(t *testing.T) {
	work := t.TempDir()
	bad := filepath.Join(work, "bad.yaml")
	if err := os.WriteFile(bad, []byte("agents:\n  - id: a\n    backend: {type: opena, model: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c := connect(t, tr.connect(t, newServer(t, mcpserver.Options{NoLogs: true, ConfigDir: work})))
			for _, tt := range []struct {
				args map[string]any
				says string
			}{
				{map[string]any{"config": "bad.yaml"}, "did you mean 'openai'"},
				{map[string]any{"config": bad}, "did you mean 'openai'"},
				{map[string]any{"config": "no_such_file.yaml"}, "is refused"},
				{map[string]any{"config": "agent: {id: a, backend: {type: opena}}\n"}, "did you mean 'openai'"},
				{map[string]any{"config": "@examples/nope"}, "no example config matches"},
				{map[string]any{"models": []string{"no-such-model-xyz"}}, `unknown model "no-such-model-xyz"`},
				{map[string]any{"config": "@examples/sim_single_agent", "models": []string{"sim-a"}}, "give one"},
				{map[string]any{"config": "@examples/sim_single_agent", "timeout_seconds": 0}, "timeout_seconds must be a positive"},
				{map[string]any{"question": "  "}, "question is empty"},
			} {
				if _, ok := tt.args["question"]; !ok {
					tt.args["question"] = "q"
				}
				res, _ := call(ctx30(t), t, c, tt.args)
				if !res.IsError || !strings.Contains(text(res), tt.says) {
					t.Errorf("%v: error %v, %q; want it to say %q", tt.args, res.IsError, text(res), tt.says)
				}
			}
		})
	}
}

// A run that ends without an answer is a tool error naming its status and
// reason, with the structured result too.
func TestAFailedRunIsAToolErrorNamingItsStatus(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "s.yaml", "models:\n  m1: {always: {fault: \"401\"}}\n")
	write(t, dir, "c.yaml", "agent: {id: a, backend: {type: sim, model: m1, scenario: s.yaml}}\n")
	c := connect(t, transports[0].connect(t, newServer(t, mcpserver.Options{ConfigDir: dir})))
	res, out := call(ctx30(t), t, c, map[string]any{"question": "q", "config": "c"})
	if !res.IsError || !strings.HasPrefix(text(res), "massgen run failed: ") || !strings.Contains(text(res), "401") {
		t.Fatalf("error %v: %q", res.IsError, text(res))
	}
	if out.Status != "failed" || out.Error == "" || out.FinalAnswer != "" || out.LogDir == "" {
		t.Errorf("structured result %+v", out)
	}
}

func TestListsTheExamples(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	write(t, dir, "mine.yaml", "# My own team\nagent: {id: a, backend: {type: sim}}\n")
	write(t, outside, "theirs.yaml", "# "+secret+"\nagent: {id: a, backend: {type: sim}}\n")
	if err := os.Symlink(filepath.Join(outside, "theirs.yaml"), filepath.Join(dir, "theirs.yaml")); err != nil {
		t.Fatal(err)
	}
	c := connect(t, transports[0].connect(t, newServer(t, mcpserver.Options{ConfigDir: dir})))
	res, err := c.CallTool(ctx30(t), &mcp.CallToolParams{Name: "massgen_examples"})
	if err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
	var out mcpserver.ExamplesOutput
	data, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(data, &out)
	var names []string
	for _, e := range out.Examples {
		names = append(names, e.Name)
		if e.Description == "" {
			t.Errorf("example %s has no description", e.Name)
		}
	}
	if !slices.Contains(names, "sim_three_agents") || !strings.Contains(text(res), "sim_three_agents: ") {
		t.Errorf("examples %v, text %q", names, text(res))
	}
	// The config directory's files, but not a link out of it.
	if !slices.Contains(names, "mine") || !out.Examples[0].Dir || !strings.Contains(text(res), "mine (config directory): My own team") ||
		slices.Contains(names, "theirs") || strings.Contains(text(res), secret) {
		t.Errorf("config directory: %v, text %q", names, text(res))
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// team is a config of agents on a simulator the test started.
func team(base string, models ...string) string {
	var b strings.Builder
	b.WriteString("agents:\n")
	for i, m := range models {
		fmt.Fprintf(&b, "  - id: agent_%d\n    backend: {type: chatcompletion, model: %s, base_url: %q}\n", i+1, m, base)
	}
	return b.String()
}
