package workflowmcp_test

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/agent/workflowmcp"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/tooltest"
)

// An agent's own tools over MCP: listed with their schemas and called as
// the tool loop calls them, behind the token like the workflow tools.
func TestToolsServerListsAndCallsTheAgentsTools(t *testing.T) {
	srv := workflowmcp.NewTools([]tool.Tool{tooltest.Add(), tooltest.Lookup()})
	url, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", resp.StatusCode)
	}
	ctx := t.Context()
	sess, err := connect(ctx, url, srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	list, err := sess.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 2 {
		t.Fatalf("tools: %+v, %v", list, err)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil || res.IsError || text(res) != "5" {
		t.Errorf("add: %+v, %v", res, err)
	}
	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{"country": "Atlantis"}})
	if err != nil || !res.IsError {
		t.Errorf("lookup of an unknown country: %+v, %v", res, err)
	}
}
