package app

import (
	"fmt"
	"slices"
	"sync"

	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/tool/mcp"
)

// runIgnored is what one run did not do of what its config asked: the
// config's ignored features (config.Config.IgnoredFeatures), then, as the
// run finds them, the MCP servers an agent went without because they did
// not start ("mcp_servers.fs (agent a)"). The views it watches (the log
// writer's, so status.json's meta.ignored_features) are told at once, so
// a run that ends after an agent went on without a server says so; the
// outcome's IgnoredFeatures (the WARNINGS line) is the final list.
type runIgnored struct {
	mu    sync.Mutex
	list  []string
	views []*event.View
	// warnings are the run's (warnings.go): the MCP pool's warnings reach
	// the runs in progress through their runIgnored.
	warnings *warnings
}

// warn is a warning of this run (msg without a "warning:" prefix).
func (r *runIgnored) warn(msg string) {
	if r.warnings != nil {
		r.warnings.add("%s", msg)
	}
}

// seed sets the features known before the run.
func (r *runIgnored) seed(features []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range features {
		if !slices.Contains(r.list, f) {
			r.list = append(r.list, f)
		}
	}
	r.declare()
}

// watch makes v hear the list, now and as it grows.
func (r *runIgnored) watch(v *event.View) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.views = append(r.views, v)
	r.declare()
}

// leftOut is an mcp.Options.LeftOut: agent l.Agent goes without server
// l.Server (the pool's warning says why).
func (r *runIgnored) leftOut(l mcp.LeftOutServer) {
	r.seed([]string{mcpFeature(l)})
}

// mcpFeature is the stable name of a server an agent went without.
func mcpFeature(l mcp.LeftOutServer) string {
	return fmt.Sprintf("mcp_servers.%s (agent %s)", l.Server, l.Agent)
}

// features is the list so far.
func (r *runIgnored) features() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

func (r *runIgnored) declare() {
	for _, v := range r.views {
		v.Declare(nil, slices.Clone(r.list))
	}
}
