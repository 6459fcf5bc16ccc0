package server

import (
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
)

// Requests a web page could forge. Without --api-key the server trusts
// whoever reaches it, and any page the user opens can reach 127.0.0.1:
//   - a cross-origin POST with a "simple" Content-Type (text/plain, a
//     form's, or none) is sent without a CORS preflight: the page cannot
//     read the answer, but the run starts and is billed. Run routes accept
//     application/json only (contentTypeError).
//   - a page whose name the attacker re-points at 127.0.0.1 (DNS
//     rebinding) is same-origin with the server and may read everything;
//     its requests carry the attacker's name in Host. Only the names the
//     server is known by are accepted (hostPolicy).
// Both checks also apply with --api-key: a key leaked into a page's
// reach should not be the only fence.

// hostPolicy says which Host headers are accepted.
type hostPolicy struct {
	any   bool                // "*" in Deps.AllowedHosts: no check
	names map[string]struct{} // normalised host names and IP literals
	// anyIP accepts every IP literal: a server listening beyond loopback
	// may be reached at an address it does not know (through NAT, a
	// container's published port), and an IP cannot be rebound.
	anyIP bool
}

// newHostPolicy builds the policy for a server listening on listenHost
// ("" and loopback addresses: this machine only) with the extra allowed
// names of --allowed-hosts. Ports are not compared: a port mapping or a
// proxy may change them, and DNS rebinding forges the name, not the port.
func newHostPolicy(listenHost string, allowed []string) hostPolicy {
	p := hostPolicy{names: map[string]struct{}{}}
	add := func(h string) {
		if h = normHost(h); h != "" {
			p.names[h] = struct{}{}
		}
	}
	for _, h := range []string{"localhost", "127.0.0.1", "::1", listenHost} {
		add(h)
	}
	for _, h := range allowed {
		if strings.TrimSpace(h) == "*" {
			p.any = true
		}
		add(h)
	}
	if !isLoopback(listenHost) {
		// 0.0.0.0, ::, a public address or a name: clients on other
		// machines call it by the machine's name or by an address.
		p.anyIP = true
		if name, err := os.Hostname(); err == nil {
			add(name)
			short, _, _ := strings.Cut(name, ".")
			add(short)
		}
	}
	return p
}

// isLoopback reports whether listening on host serves this machine only.
func isLoopback(host string) bool {
	host = normHost(host)
	if host == "" || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// normHost is a host name or IP literal without port, brackets, trailing
// dot and case.
func normHost(h string) string {
	h = strings.TrimSpace(h)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// allows reports whether a request addressed to host (r.Host) is served.
// An empty Host (HTTP/1.0) is accepted: browsers always send one.
func (p hostPolicy) allows(host string) bool {
	if p.any || host == "" {
		return true
	}
	h := normHost(host)
	if _, ok := p.names[h]; ok {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (p.anyIP || ip.IsLoopback())
}

// hostError is the 403 for a request addressed to a name the server does
// not answer to. It names no allowed name: a rebound page can read it.
func hostError(host string) *Error {
	return &Error{Status: http.StatusForbidden, Code: "host_not_allowed", Type: "invalid_request_error",
		Message: fmt.Sprintf("Host %q is not allowed: the server answers requests addressed to its listen address, "+
			"localhost or its allowed hosts. Behind a proxy or under another name, start it with --allowed-hosts %s "+
			"(or MASSGEN_SERVER_ALLOWED_HOSTS; '*' turns the check off).", host, normHost(host))}
}

// contentTypeError is the 415 for a POST whose body is not declared JSON
// (nil when it is: application/json, with any parameters).
func contentTypeError(r *http.Request) *Error {
	ct := r.Header.Get("Content-Type")
	// A malformed parameter (ErrInvalidMediaParameter) still names the type.
	if mt, _, err := mime.ParseMediaType(ct); (err == nil || errors.Is(err, mime.ErrInvalidMediaParameter)) && mt == "application/json" {
		return nil
	}
	got := "none"
	if ct != "" {
		got = fmt.Sprintf("%q", ct)
	}
	return &Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type", Type: "invalid_request_error",
		Message: fmt.Sprintf("The request body must be JSON, sent with 'Content-Type: application/json' (got %s). "+
			"Other types are refused so that a web page cannot start a run with a form or plain-text POST.", got)}
}
