package cli

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
)

// Endpoint is a place outside its sandbox that a CLI talks to: its
// provider (with the key it sends there), massgen's workflow server, an
// MCP server of the agent's config that is reached by URL.
type Endpoint struct {
	URL string
	Key string // "": none
}

// Isolation is one task's network, made by Agent.Network.
type Isolation struct {
	// Routes are what the CLI uses in place of the task's endpoints, in
	// their order: a URL it can reach from its sandbox, and the key it
	// sends there (a stand-in, when the network adds the real one).
	Routes []Endpoint
	// Wrap runs the CLI in its sandbox behind the routes (as Agent.Wrap).
	Wrap func(cmd *exec.Cmd, env []string)
	// Release ends the routes; called once the CLI has exited.
	Release func()
}

// DefaultEndpoint is a Vendor that names the provider endpoint its CLI
// uses when Invocation.BaseURL is empty, so a network limited to it can
// be made.
type DefaultEndpoint interface {
	DefaultBaseURL() string
}

// routed lays out a task for the agent's Network: the invocation the
// vendor prepares (the routes in place of the endpoints), how to wrap the
// CLI and what to release once it has exited. Without a Network the task
// runs as it is, wrapped by Wrap.
func (a *Agent) routed(inv *Invocation) (*Invocation, func(*exec.Cmd, []string), func(), error) {
	if a.Network == nil {
		return inv, a.Wrap, func() {}, nil
	}
	base := inv.BaseURL
	if l, ok := a.Vendor.(LoginEndpoint); ok && base == "" && inv.APIKey == "" {
		base = l.LoginBaseURL() // the user's login, not a key
	}
	if d, ok := a.Vendor.(DefaultEndpoint); ok && base == "" {
		base = d.DefaultBaseURL()
	}
	if base == "" {
		return nil, nil, nil, errors.New("its provider's endpoint is not known to massgen, and its CLI's network is limited to it: " +
			"set the backend's base_url, or give its CLI the host's network (command_line_allow_network: true)")
	}
	eps := []Endpoint{{URL: base, Key: inv.APIKey}}
	if inv.Workflow != nil {
		eps = append(eps, Endpoint{URL: inv.Workflow.URL})
	}
	for _, s := range inv.MCPServers {
		if s.URL != "" {
			eps = append(eps, Endpoint{URL: s.URL})
		}
	}
	iso, err := a.Network(eps)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("its CLI's network: %w", err)
	}
	if len(iso.Routes) != len(eps) {
		iso.Release()
		return nil, nil, nil, fmt.Errorf("its CLI's network gave %d routes for %d endpoints", len(iso.Routes), len(eps))
	}
	out := *inv
	out.BaseURL, out.APIKey = iso.Routes[0].URL, iso.Routes[0].Key
	next := 1
	if inv.Workflow != nil {
		w := *inv.Workflow
		w.URL = iso.Routes[next].URL
		out.Workflow = &w
		next++
	}
	out.MCPServers = slices.Clone(inv.MCPServers)
	for i := range out.MCPServers {
		if out.MCPServers[i].URL != "" {
			out.MCPServers[i].URL = iso.Routes[next].URL
			next++
		}
	}
	return &out, iso.Wrap, iso.Release, nil
}
