package server

// HostPolicy is massgen serve's Host check (hostcheck.go), for massgen's
// other HTTP server, massgen mcp --http: the same names are accepted, so
// that a DNS-rebinding page is refused by both alike.
type HostPolicy struct{ p hostPolicy }

// NewHostPolicy is the policy of a server listening on listenHost with the
// extra names of --allowed-hosts ("*": no check).
func NewHostPolicy(listenHost string, allowed []string) HostPolicy {
	return HostPolicy{newHostPolicy(listenHost, allowed)}
}

// Allows reports whether a request addressed to host (r.Host) is served.
func (h HostPolicy) Allows(host string) bool { return h.p.allows(host) }

// IsLoopback reports whether listening on host serves this machine only.
func IsLoopback(host string) bool { return isLoopback(host) }
