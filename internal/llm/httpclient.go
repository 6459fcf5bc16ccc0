package llm

import "net/http"

// HTTPClient is the client every adapter uses when it is given none: one
// connection pool for all providers. Its transport keeps enough idle
// connections per host for a whole team — the agents of a team often talk
// to the same provider host at once, and net/http's default of two idle
// connections per host would make most of them dial again on every turn —
// and watches the bytes of each response (WatchTransport), so a stalled
// provider fails a turn instead of holding it.
var HTTPClient = &http.Client{Transport: WatchTransport(teamTransport())}

func teamTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 256
	return t
}
