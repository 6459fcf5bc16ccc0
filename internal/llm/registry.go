package llm

import (
	"fmt"
	"slices"
	"sync"
)

// Backend is one agent's backend, resolved for building its model: where
// it connects, with which key, and what every request carries. The
// application fills it from the config and the provider catalogue (default
// base URL, key variables); a Provider's Prepare then adapts it to its
// vendor.
type Backend struct {
	Type    string // the config's backend type (groq, azure_openai, sim, …)
	Model   string
	BaseURL string
	APIKey  string
	Stream  bool // false: servers that cannot stream tool calls
	// Params are the provider parameters every request carries: the
	// config's pass-through keys plus the built-in tool flags the type
	// supports (enable_web_search: true, …).
	Params map[string]any
	// Getenv reads the environment (for vendor settings such as
	// AZURE_OPENAI_ENDPOINT).
	Getenv func(string) string
}

// Provider is how one backend type becomes a Model, as a Caddy module is
// how a directive becomes a handler: each adapter package registers the
// types it speaks in its register.go, and a program links a provider in
// by importing its package.
type Provider struct {
	Type string
	// Prepare adapts a backend to its vendor before the model is built:
	// connection settings given as backend keys (Azure's azure_endpoint),
	// flags the vendor spells its own way (Grok's search_parameters). It
	// may rewrite b.Params, which become the agent's request parameters.
	// An error says what the user must set. nil: nothing to adapt.
	Prepare func(b *Backend) error
	// New builds the model; b has been prepared.
	New func(b Backend) Model
}

var registry = struct {
	sync.RWMutex
	m map[string]Provider
}{m: map[string]Provider{}}

// Register makes a backend type buildable. Registering a type twice is a
// programming error and panics, as http.Handle does.
func Register(p Provider) {
	registry.Lock()
	defer registry.Unlock()
	if p.Type == "" || p.New == nil {
		panic("llm.Register: a provider needs a Type and New")
	}
	if _, dup := registry.m[p.Type]; dup {
		panic(fmt.Sprintf("llm.Register: backend type %q registered twice", p.Type))
	}
	registry.m[p.Type] = p
}

// LookupProvider returns the provider registered for a backend type.
func LookupProvider(typ string) (Provider, bool) {
	registry.RLock()
	defer registry.RUnlock()
	p, ok := registry.m[typ]
	return p, ok
}

// Registered lists the registered backend types, sorted.
func Registered() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.m))
	for t := range registry.m {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
