package cli

import (
	"os/exec"
	"slices"
	"testing"
)

type fakeVendor struct{ base string }

func (fakeVendor) Type() string                         { return "fake" }
func (fakeVendor) Program() string                      { return "fake" }
func (fakeVendor) Prepare(*Invocation) (Command, error) { return Command{}, nil }
func (fakeVendor) Decoder() Decoder                     { return nil }
func (v fakeVendor) DefaultBaseURL() string             { return v.base }

// A task's endpoints go to the Network in order — the provider (the
// vendor's default when the agent names none) with its key, the workflow
// server, the MCP servers reached by URL — and the vendor prepares the
// routes in their place; the agent's own invocation is not changed.
func TestRoutedTaskUsesTheRoutes(t *testing.T) {
	var got []Endpoint
	released := false
	a := &Agent{Vendor: fakeVendor{base: "https://api.example.com/v1"}, Network: func(eps []Endpoint) (Isolation, error) {
		got = eps
		var routes []Endpoint
		for i := range eps {
			routes = append(routes, Endpoint{URL: "http://127.0.0.1:" + string(rune('0'+i)), Key: map[bool]string{true: "stand-in"}[i == 0]})
		}
		return Isolation{Routes: routes, Wrap: func(*exec.Cmd, []string) {}, Release: func() { released = true }}, nil
	}}
	inv := &Invocation{APIKey: "real", Workflow: &MCPServer{Name: WorkflowServer, URL: "http://127.0.0.1:999/mcp"},
		MCPServers: []MCPServer{{Name: "local", Command: "server"}, {Name: "remote", URL: "https://mcp.example.com/x"}}}
	out, wrap, release, err := a.routed(inv)
	if err != nil {
		t.Fatal(err)
	}
	want := []Endpoint{{URL: "https://api.example.com/v1", Key: "real"}, {URL: "http://127.0.0.1:999/mcp"}, {URL: "https://mcp.example.com/x"}}
	if !slices.Equal(got, want) {
		t.Errorf("endpoints %+v, want %+v", got, want)
	}
	if out.BaseURL != "http://127.0.0.1:0" || out.APIKey != "stand-in" || out.Workflow.URL != "http://127.0.0.1:1" ||
		out.MCPServers[0].Command != "server" || out.MCPServers[1].URL != "http://127.0.0.1:2" {
		t.Errorf("routed invocation %+v (workflow %+v)", out, out.Workflow)
	}
	if inv.APIKey != "real" || inv.Workflow.URL != "http://127.0.0.1:999/mcp" || inv.MCPServers[1].URL != "https://mcp.example.com/x" {
		t.Errorf("the original invocation changed: %+v", inv)
	}
	if wrap == nil {
		t.Error("no wrap")
	}
	release()
	if !released {
		t.Error("not released")
	}
}

// Without a known endpoint the network cannot be limited to it: the task
// fails and says what to set.
func TestRoutedTaskNeedsAnEndpoint(t *testing.T) {
	a := &Agent{Vendor: fakeVendor{}, Network: func([]Endpoint) (Isolation, error) {
		t.Fatal("Network called")
		return Isolation{}, nil
	}}
	if _, _, _, err := a.routed(&Invocation{APIKey: "k"}); err == nil {
		t.Fatal("no error")
	}
}

// Without a Network the task runs as it is, under Wrap.
func TestUnroutedTaskUsesWrap(t *testing.T) {
	wrapped := false
	a := &Agent{Vendor: fakeVendor{}, Wrap: func(*exec.Cmd, []string) { wrapped = true }}
	inv := &Invocation{BaseURL: "http://x"}
	out, wrap, release, err := a.routed(inv)
	if err != nil || out != inv {
		t.Fatalf("%v %v", out, err)
	}
	wrap(nil, nil)
	release()
	if !wrapped {
		t.Error("Wrap not used")
	}
}
