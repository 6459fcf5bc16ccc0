package codegen_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/codegen"
	"github.com/massgen/massgen/internal/tool/mcp"
	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// weatherServer is a go-sdk MCP server over streamable HTTP with three
// tools: get-forecast (a name Python cannot hold), secret (which the
// agent's exclude_tools leave out) and fail (a tool error).
func weatherServer(t testing.TB) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "weather", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "get-forecast", Description: "Get the forecast of a city.",
		InputSchema: map[string]any{"type": "object", "required": []any{"city"}, "properties": map[string]any{
			"city": map[string]any{"type": "string", "description": "City name"},
			"days": map[string]any{"type": "integer", "description": "Number of days"},
		}}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "forecast " + string(req.Params.Arguments)}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "secret", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the secret"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it broke"}}}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

func notesServer(t testing.TB) string {
	srv := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "add_note", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "noted"}}}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// setup is agent a's code-based tools over both servers (notes direct),
// written into a fresh workspace, and the run's hub.
func setup(t testing.TB) (dir string, a *codegen.Agent, h *codegen.Hub, token string) {
	servers := []mcp.Server{{Name: "weather", Type: mcp.StreamableHTTP, URL: weatherServer(t)},
		{Name: "notes", Type: mcp.StreamableHTTP, URL: notesServer(t)}}
	// Closed before the servers (cleanups run last first): the client
	// holds a stream open.
	p := mcp.NewPool(mcp.Options{Warn: func(string) {}, LeftOut: func(mcp.LeftOutServer) {}})
	t.Cleanup(p.Close)
	var handles []mcp.Handle
	for _, s := range servers {
		hd, err := p.Add(s)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, hd)
	}
	p.Start()
	dir = t.TempDir()
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	a = codegen.NewAgent(codegen.Options{ID: "a", Source: p.Tools("a", handles, nil, []string{"secret"}),
		Direct: []string{"notes"}, Out: codegen.GuardWriter(g.WriteFile), Root: dir,
		Warn: func(m string) { t.Errorf("warning: %s", m) }})
	h, err = codegen.NewHub()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return dir, a, h, h.Add(a)
}

func names(ts []tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Def().Name)
	}
	return out
}

func python(t *testing.T) string {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	return py
}

// The wrappers' script, as an agent would run it.
const script = `from servers.weather import get_forecast
print(get_forecast("Paris", days=3))
try:
    from servers.weather import fail
    fail()
except RuntimeError as e:
    print("raised:", e)
`

func TestDirectKeepsOnlyDirectServersAndWritesTheWrappers(t *testing.T) {
	dir, a, _, _ := setup(t)
	ts, err := a.Direct().Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ts); !slices.Equal(got, []string{"mcp__notes__add_note"}) {
		t.Errorf("function-calling tools %v, want only the direct server's", got)
	}
	for _, f := range []string{"servers/__init__.py", "servers/weather/__init__.py", "servers/weather/get_forecast.py",
		"servers/weather/fail.py", ".mcp/client.py", ".mcp/servers.json", "custom_tools/__init__.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"servers/weather/secret.py", "servers/notes"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written: an excluded tool and a direct server have no wrapper", f)
		}
	}
	w, _ := os.ReadFile(filepath.Join(dir, "servers/weather/get_forecast.py"))
	for _, want := range []string{"def get_forecast(city: str, days: Optional[int] = None) -> Any:",
		`server="weather"`, `tool="get-forecast"`, "city (str): City name"} {
		if !strings.Contains(string(w), want) {
			t.Errorf("the wrapper lacks %q:\n%s", want, w)
		}
	}
	js, _ := os.ReadFile(filepath.Join(dir, ".mcp/servers.json"))
	if strings.Contains(string(js), "127.0.0.1") || strings.Contains(string(js), "notes") {
		t.Errorf("servers.json names more than the coded servers: %s", js)
	}
}

// A wrapper run with the hub's address and token calls the real server
// and prints its result; a tool error raises.
func TestWrapperCallsTheServerThroughTheHub(t *testing.T) {
	py := python(t)
	dir, a, h, token := setup(t)
	if _, err := a.Direct().Tools(t.Context()); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), py, "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), codegen.Env(h.URL(), token)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), `forecast {"city":"Paris","days":3}`) || !strings.Contains(string(out), "raised: Error calling weather.fail: it broke") {
		t.Errorf("output %q", out)
	}
}

func post(t *testing.T, url, token, body string) (int, string) {
	req, _ := http.NewRequestWithContext(t.Context(), "POST", url+"/call", strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := make([]byte, 4096)
	n, _ := resp.Body.Read(b)
	return resp.StatusCode, string(b[:n])
}

func TestHubRefusesWithoutTheTokenAndToolsNotGiven(t *testing.T) {
	_, _, h, token := setup(t)
	call := `{"server":"weather","tool":"get-forecast","arguments":{"city":"Oslo"}}`
	if code, body := post(t, h.URL(), "", call); code != http.StatusUnauthorized || strings.Contains(body, "forecast") {
		t.Errorf("no token: %d %q", code, body)
	}
	if code, body := post(t, h.URL(), token+"x", call); code != http.StatusUnauthorized || strings.Contains(body, "forecast") {
		t.Errorf("a wrong token: %d %q", code, body)
	}
	for _, c := range []string{`{"server":"weather","tool":"secret"}`, `{"server":"other","tool":"get-forecast"}`,
		`{"server":"weather","tool":"nope"}`} {
		if code, body := post(t, h.URL(), token, c); code != http.StatusForbidden || strings.Contains(body, "the secret") {
			t.Errorf("%s: %d %q, want 403", c, code, body)
		}
	}
	if code, body := post(t, h.URL(), token, call); code != http.StatusOK || !strings.Contains(body, `forecast {\"city\":\"Oslo\"}`) {
		t.Errorf("the agent's own call: %d %q", code, body)
	}
}

// In the sandbox (no network), the command reaches the hub through the
// relay with a stand-in token, and nothing else: not another service of
// the host's loopback, not the hub's own address. Its attempts change
// nothing in the workspace.
func TestSandboxedCommandReachesOnlyTheHub(t *testing.T) {
	python(t)
	if _, err := sandbox.Bwrap(); err != nil {
		t.Skip(err)
	}
	dir, a, h, token := setup(t)
	if _, err := a.Direct().Tools(t.Context()); err != nil {
		t.Fatal(err)
	}
	g, err := workspace.New(workspace.Policy{Agent: "a", Workspace: dir})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.New(g, sandbox.Config{Endpoints: []sandbox.Endpoint{{URL: h.URL(), Key: token}},
		RouteEnv: func(rs []sandbox.Route) []string { return codegen.Env(rs[0].URL, rs[0].Key) }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(t.Context(), "python3 - <<'EOF'\n"+script+"EOF", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Output, `forecast {"city":"Paris","days":3}`) {
		t.Fatalf("in the sandbox: %+v", res)
	}
	// Another service on the host's loopback, and the hub's real address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	before := wstest.Snapshot(t, dir)
	hubAddr := strings.TrimPrefix(h.URL(), "http://")
	for _, addr := range []string{ln.Addr().String(), hubAddr, "1.1.1.1:80"} {
		host, port, _ := net.SplitHostPort(addr)
		probe := fmt.Sprintf(`python3 -c "import socket; socket.create_connection(('%s', %s), timeout=3); print('CONNECTED')"`, host, port)
		res, err := r.Run(t.Context(), probe, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || strings.Contains(res.Output, "CONNECTED") {
			t.Errorf("the sandbox reached %s: %+v", addr, res)
		}
	}
	res, err = r.Run(t.Context(), `echo "token=$`+codegen.EnvToken+`"`, "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Output, token) || !strings.Contains(res.Output, "token=massgen-sandbox-key-") {
		t.Errorf("the command holds %q, want a stand-in, never the token", res.Output)
	}
	ln.Close()
	<-done
	if len(accepted) > 0 {
		t.Error("the host's listener accepted a connection from the sandbox")
	}
	wstest.Unchanged(t, dir, before)
}
