package mcpserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions are the fences of the streamable HTTP endpoint. A call
// starts a team on the user's provider keys, and, with
// --allow-config-paths, runs whatever the config says: every request
// must carry the API key.
type HTTPOptions struct {
	// APIKey is what every request must send as "Authorization: Bearer
	// KEY". Empty refuses every request, unless NoAuth.
	APIKey string
	// NoAuth serves requests without a key (massgen mcp --no-auth, on a
	// loopback address only): any local user, and any page of the user's
	// browser that gets past the Host and Origin checks, may then run teams.
	NoAuth bool
	// AllowHost reports whether a request addressed to host (r.Host, with
	// its port) is served: massgen serve's check (DNS rebinding). nil: the
	// SDK's own, which refuses a request that reached a loopback address
	// under another name than localhost.
	AllowHost func(host string) bool
}

// Handler serves the streamable HTTP transport behind three checks, in
// order: the Host header (o.AllowHost, else the SDK's DNS-rebinding
// protection: 403), cross-origin browser requests (403), and the API key
// (401 with WWW-Authenticate). A refused request reaches no session and
// starts no run.
func (s *Server) Handler(o HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger: s.o.Logger,
		// Ours replaces it, and knows --allowed-hosts.
		DisableLocalhostProtection: o.AllowHost != nil,
	})
	var next http.Handler = http.NewCrossOriginProtection().Handler(h)
	if !o.NoAuth {
		next = s.requireKey(o.APIKey, next)
	}
	if o.AllowHost == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !o.AllowHost(r.Host) {
			s.warn("request refused: Host not allowed (see --allowed-hosts)", "host", r.Host)
			// It names no allowed name: a rebound page can read it.
			httpError(w, http.StatusForbidden, "host_not_allowed", "Host "+quote(r.Host)+" is not allowed: massgen mcp answers "+
				"requests addressed to its listen address or localhost. Under another name (a proxy), start it with --allowed-hosts.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireKey answers 401 to a request without the key. The key is
// compared as a SHA-256 digest, in constant time: neither its bytes nor
// its length can be found by timing.
func (s *Server) requireKey(key string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(key))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		scheme, token, ok := strings.Cut(auth, " ")
		switch {
		case key == "":
			w.Header().Set("WWW-Authenticate", `Bearer realm="massgen mcp"`)
			httpError(w, http.StatusUnauthorized, "no_api_key", "This server has no API key set: it serves no request.")
		case auth == "" || !ok || !strings.EqualFold(scheme, "Bearer"):
			w.Header().Set("WWW-Authenticate", `Bearer realm="massgen mcp"`)
			httpError(w, http.StatusUnauthorized, "missing_api_key", "massgen mcp needs its API key in an Authorization header: "+
				"'Authorization: Bearer KEY' (massgen mcp --http prints where it keeps the key when it starts).")
		default:
			got := sha256.Sum256([]byte(strings.TrimSpace(token)))
			if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
				next.ServeHTTP(w, r)
				return
			}
			s.warn("request refused: wrong API key", "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="massgen mcp", error="invalid_token"`)
			httpError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
		}
	})
}

func (s *Server) warn(msg string, args ...any) {
	if s.o.Logger != nil {
		s.o.Logger.Warn(msg, args...)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// httpError writes an error as massgen serve does: {"error": {code, message}}.
func httpError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	_, _ = w.Write(append(b, '\n'))
}
