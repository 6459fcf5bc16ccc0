package mcpserver_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/massgen/massgen/internal/llmsim"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/mcpserver"
)

const hangScenario = `
models:
  "*":
    always: {fault: hang}
`

// When the client cancels a call (notifications/cancelled), the run stops
// and so does every model request of its team.
func TestCancellingTheCallStopsTheTeamsRequests(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			sim, base := simtest.Start(t, hangScenario)
			dir := t.TempDir()
			write(t, dir, "hang.yaml", team(base, "m-a", "m-b"))
			c := connect(t, tr.connect(t, newServer(t, mcpserver.Options{NoLogs: true, ConfigDir: dir})))

			ctx, cancel := context.WithCancel(ctx30(t))
			defer cancel()
			done := make(chan error, 1)
			go func() {
				p := &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "hang", "config": "hang"}}
				_, err := c.CallTool(ctx, p)
				done <- err
			}()
			waitRequests(t, sim, func(rs []llmsim.Record) bool { return len(rs) == 2 })
			cancel()
			if err := <-done; err == nil {
				t.Error("a cancelled call returned a result")
			}
			waitRequests(t, sim, func(rs []llmsim.Record) bool {
				for _, r := range rs {
					if r.End.IsZero() {
						return false
					}
				}
				return true
			})
			for _, r := range sim.Requests() {
				if r.Outcome != llmsim.OutcomeCancelled {
					t.Errorf("request %d (%s): outcome %s, want cancelled", r.ID, r.Model, r.Outcome)
				}
			}
			// The session still serves: the cancellation ended one call.
			if _, err := c.ListTools(ctx30(t), nil); err != nil {
				t.Errorf("after the cancellation: %v", err)
			}
		})
	}
}

// Closing the server (massgen mcp stopping) ends its sessions and cancels
// the runs in flight.
func TestClosingTheServerStopsItsRuns(t *testing.T) {
	sim, base := simtest.Start(t, hangScenario)
	dir := t.TempDir()
	write(t, dir, "hang.yaml", team(base, "m-a"))
	s := newServer(t, mcpserver.Options{NoLogs: true, ConfigDir: dir})
	c := connect(t, transports[0].connect(t, s))
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx30(t), &mcp.CallToolParams{Name: "massgen_run", Arguments: map[string]any{"question": "hang", "config": filepath.Join(dir, "hang.yaml")}}) // absolute, inside the config dir
		done <- err
	}()
	waitRequests(t, sim, func(rs []llmsim.Record) bool { return len(rs) == 1 })
	s.Close()
	if err := <-done; err == nil {
		t.Error("the call got a result from a closed server")
	}
	waitRequests(t, sim, func(rs []llmsim.Record) bool { return !rs[0].End.IsZero() })
	if r := sim.Requests()[0]; r.Outcome != llmsim.OutcomeCancelled {
		t.Errorf("outcome %s", r.Outcome)
	}
}

func waitRequests(t *testing.T, sim *llmsim.Server, pred func([]llmsim.Record) bool) {
	t.Helper()
	if err := sim.WaitFor(ctx30(t), pred); err != nil {
		t.Fatalf("simulator: %v; requests %+v", err, sim.Requests())
	}
}
