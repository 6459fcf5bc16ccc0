package workflowmcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/tool"
)

// NewTools returns a server of an agent's own massgen tools (custom tools,
// commands in the agent's container), for an agent that brings its own
// tool loop and so cannot be handed them as functions: each call runs the
// tool as the LLM agent's tool loop would, whatever the turn. It has no
// workflow tools; Listen serves it as New's server is served.
func NewTools(tools []tool.Tool) *Server {
	var b [24]byte
	_, _ = rand.Read(b[:])
	s := &Server{token: hex.EncodeToString(b[:])}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "massgen_tools", Title: "massgen tools", Version: "1"}, nil)
	for _, t := range tools {
		s.mcp.AddTool(mcpTool(t.Def()), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := json.RawMessage(req.Params.Arguments)
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			res := tool.Invoke(ctx, t, string(args), 0)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Content}}, IsError: res.IsError}, nil
		})
	}
	return s
}
