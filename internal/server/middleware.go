package server

// What every request goes through before its route: the Host check, the
// shutdown gate, the API key, CORS, and the request log.

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// middleware refuses requests addressed to a foreign Host (hostcheck.go),
// turns requests away while shutting down, checks the API key on /v1/
// routes and logs every request at debug level.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(start))
		}()
		if !s.hosts.allows(r.Host) {
			s.log.Warn("request refused: Host not allowed (see --allowed-hosts)", "host", r.Host, "method", r.Method, "path", r.URL.Path)
			writeError(sw, hostError(r.Host))
			return
		}
		if s.cors(sw, r) {
			return // a preflight, answered
		}
		if s.isClosing() {
			writeError(sw, errShuttingDown)
			return
		}
		if s.d.APIKey != "" && strings.HasPrefix(r.URL.Path, "/v1/") {
			if e := s.checkKey(r); e != nil {
				writeError(sw, e)
				return
			}
		}
		next.ServeHTTP(sw, r)
	})
}

// cors adds the CORS headers for an allowed Origin and answers a preflight
// (reporting true); a request from any other origin gets no CORS header,
// so browsers keep it from the page. A preflight carries no credentials:
// it is answered before the API key check.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(s.d.CORSOrigins) == 0 {
		return false
	}
	allow := ""
	for _, o := range s.d.CORSOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			allow = origin
			break
		}
	}
	w.Header().Add("Vary", "Origin")
	if allow == "" {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", allow)
	h.Set("Access-Control-Expose-Headers", "X-Massgen-Run-Id")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", cmp.Or(r.Header.Get("Access-Control-Request-Headers"), "Authorization, Content-Type"))
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// statusWriter remembers the status for the access log. Unwrap keeps
// http.ResponseController (Flush, write deadlines) working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) checkKey(r *http.Request) *Error {
	auth := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(auth, "Bearer ")
	if auth == "" || !ok {
		return &Error{Status: http.StatusUnauthorized, Code: "missing_api_key", Type: "invalid_request_error",
			Message: "You didn't provide an API key. Send it in an Authorization header: 'Authorization: Bearer YOUR_KEY'."}
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.d.APIKey)) != 1 {
		return &Error{Status: http.StatusUnauthorized, Code: "invalid_api_key", Type: "invalid_request_error",
			Message: "Incorrect API key provided."}
	}
	return nil
}

// methods answers 405 unless r uses one of the allowed methods.
func methods(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	if slices.Contains(allowed, r.Method) {
		return true
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeError(w, NewError(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on %s; use %s.",
		r.Method, r.URL.Path, strings.Join(allowed, " or ")))
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, asError(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
