package llm

import (
	"sync"
	"time"
)

// Route names where one agent's requests go: the endpoint and the model,
// and the quotas the provider grants that model.
type Route struct {
	Provider string // backend type, for errors
	Endpoint string // base URL
	Model    string
	// RequestsPerMinute and TokensPerMinute pace the requests (0: no limit).
	RequestsPerMinute, TokensPerMinute int
}

// Guards are what a team's models share to protect the team and the
// providers from each other: one circuit breaker and one rate limiter per
// endpoint and model, and the idle-stream timeout. A team builds one
// Guards and wraps each agent's model with Wrap; agents on the same
// endpoint and model share their breaker and limiter, as the provider
// counts them together. The zero value is ready to use.
type Guards struct {
	Breaker BreakerPolicy
	// IdleTimeout fails a request whose response sends no byte for this
	// long (see WithIdleTimeout); 0 means DefaultIdleTimeout, < 0 none.
	IdleTimeout time.Duration

	mu       sync.Mutex
	breakers map[routeKey]*Breaker
	limiters map[routeKey]*Limiter
}

type routeKey struct{ endpoint, model string }

// DefaultIdleTimeout is how long a response may send nothing before its
// request fails (timeout_settings.stream_idle_timeout_seconds).
const DefaultIdleTimeout = 60 * time.Second

// Wrap returns m guarded for route r, retrying with p. From the outside
// in: the breaker (a request counts once, after its retries, and waits
// while the circuit is open), the retries, the rate limiter (each try
// takes its turn), and the idle-stream timeout (each try is watched).
func (g *Guards) Wrap(m Model, r Route, p RetryPolicy) Model {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.breakers == nil {
		g.breakers, g.limiters = map[routeKey]*Breaker{}, map[routeKey]*Limiter{}
	}
	k := routeKey{r.Endpoint, r.Model}
	b := g.breakers[k]
	if b == nil {
		b = &Breaker{Name: r.Endpoint + " model " + r.Model, BreakerPolicy: g.Breaker}
		g.breakers[k] = b
	}
	l, ok := g.limiters[k]
	if !ok {
		l = NewLimiter(r.RequestsPerMinute, r.TokensPerMinute)
		g.limiters[k] = l
	}
	return WithBreaker(WithRetry(WithRateLimit(WithIdleTimeout(m, g.IdleLimit()), l), p), b, r.Provider, r.Model)
}

// IdleLimit is the idle-stream timeout in force: IdleTimeout with its
// default applied, or 0 for none.
func (g *Guards) IdleLimit() time.Duration {
	switch {
	case g.IdleTimeout == 0:
		return DefaultIdleTimeout
	case g.IdleTimeout < 0:
		return 0
	}
	return g.IdleTimeout
}

// Open reports the team's open circuit that lets a trial through soonest,
// or nil when every circuit is closed. massgen serve answers 503 with
// Retry-After from it when a run fails while its team is held back.
func (g *Guards) Open() *CircuitOpenError {
	g.mu.Lock()
	defer g.mu.Unlock()
	var soonest *CircuitOpenError
	for _, b := range g.breakers {
		if open := b.Open(); open != nil && (soonest == nil || open.Wait < soonest.Wait) {
			soonest = open
		}
	}
	return soonest
}
