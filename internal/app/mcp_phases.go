package app

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/massgen/massgen/internal/orchestrator"
	"github.com/massgen/massgen/internal/tool"
	"github.com/massgen/massgen/internal/tool/mcp"
)

// mcpPhases are the MCP servers of one agent with a workspace through the
// phases of a run, and its tool source. While agents coordinate they are
// the agent's processes in the run's pool (rw.mcp), bound with its
// coordination view. When the agent presents, they start again in a pool
// of their own, bound with the write context paths writable (the guard
// has opened them), the source serves that pool, and then every agent's
// coordination-phase servers stop: nobody coordinates while the winner
// presents, and a second, read-only copy of each server would only waste
// memory and confuse whoever reads the process list. Should the run start
// again after the presentation (post-evaluation's restart), an agent's
// servers start again, in its coordination view, when its next turn asks
// for its tools. A stopped server's stderr log stays for copyMCPLogs.
type mcpPhases struct {
	rw  *runWorkspaces
	id  string
	add func(*mcp.Pool) (tool.Source, error) // adds the agent's servers to a pool

	mu   sync.Mutex
	cur  tool.Source // nil: stopped; the next Tools starts them again
	pres *mcp.Pool   // the presentation's pool, while the agent presents
}

// Tools serves the tools of the agent's servers of the current phase.
func (m *mcpPhases) Tools(ctx context.Context) ([]tool.Tool, error) {
	m.mu.Lock()
	if m.cur == nil {
		src, err := m.add(m.rw.mcp) // a new process each: CloseOwner forgot the stopped ones
		if err != nil {
			m.mu.Unlock()
			return nil, fmt.Errorf("agent %s: its MCP servers cannot start again: %v", m.id, err)
		}
		m.cur = src
	}
	cur := m.cur
	m.mu.Unlock()
	return cur.Tools(ctx)
}

// present switches the agent's servers as its final presentation starts
// (on) and ends. The guard must be in the presentation's phase before
// present(true), so that the new servers are bound with the write context
// paths writable, and must leave it only after present(false), which stops
// them.
func (m *mcpPhases) present(on bool) {
	if !on {
		m.mu.Lock()
		p := m.pres
		m.pres, m.cur = nil, nil
		m.mu.Unlock()
		if p != nil {
			p.CloseOwner(m.id) // the pool stays until closeMCP, for its logs
		}
		return
	}
	p := mcp.NewPool(mcp.Options{Warn: func(msg string) { m.rw.snaps.warn(msg) }, LeftOut: m.rw.ignored.leftOut})
	m.rw.presMu.Lock()
	m.rw.present = append(m.rw.present, p)
	m.rw.presMu.Unlock()
	next, err := m.add(p)
	if err != nil {
		m.rw.snaps.warn(fmt.Sprintf("agent %s: its MCP servers cannot restart for the final presentation: %v", m.id, err))
		return
	}
	p.Start() // they start while the coordination-phase ones stop
	m.mu.Lock()
	m.cur, m.pres = next, p
	m.mu.Unlock()
	m.rw.stopCoordinationMCP()
}

// stopCoordinationMCP stops the coordination-phase servers of every agent,
// in parallel, and waits for them. The presenter's source already serves
// its presentation pool; the others' start again if they are asked for
// tools again.
func (rw *runWorkspaces) stopCoordinationMCP() {
	rw.presMu.Lock()
	phases := slices.Clone(rw.phases)
	rw.presMu.Unlock()
	var wg sync.WaitGroup
	for _, m := range phases {
		wg.Go(func() {
			// Under m.mu, so that a concurrent Tools gets either the old
			// servers (a call on them says they are stopped) or new ones,
			// never a source left pointing at stopped servers.
			m.mu.Lock()
			defer m.mu.Unlock()
			rw.mcp.CloseOwner(m.id)
			if m.pres == nil {
				m.cur = nil
			}
		})
	}
	wg.Wait()
}

// stopMCPWhenOthersPresent has the presentation of an agent without MCP
// servers of its own in this pool (no workspace, or no mcp_servers) stop
// the coordination-phase servers too; an agent with them does it in
// mcpPhases.present, once its own have started again.
func (rw *runWorkspaces) stopMCPWhenOthersPresent(agents []orchestrator.Agent) {
	own := map[string]bool{}
	for _, m := range rw.phases {
		own[m.id] = true
	}
	for i := range agents {
		if own[agents[i].ID] {
			continue
		}
		on := agents[i].OnPresent
		agents[i].OnPresent = func(present bool) {
			if on != nil {
				on(present)
			}
			if present {
				rw.stopCoordinationMCP()
			}
		}
	}
}
