package codegen

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// maxBody bounds one call's request: arguments, not files.
const maxBody = 8 << 20

// Hub is massgen's endpoint for the wrappers of every agent of a run: an
// HTTP server on 127.0.0.1 (a random port) that takes POST /call with
// {"server", "tool", "arguments"} and the agent's token as a bearer
// token, and answers {"content", "is_error"}. Each agent has a token of
// its own, so a token reaches only its agent's tools: a call without one
// is 401, a tool the agent was not given 403. Close it when the run ends.
type Hub struct {
	ln  net.Listener
	srv *http.Server
	url string

	mu     sync.Mutex
	agents map[[32]byte]*Agent // by the token's hash: a lookup that says nothing of the token
	wg     sync.WaitGroup
}

// NewHub starts a hub.
func NewHub() (*Hub, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &Hub{ln: ln, url: "http://" + ln.Addr().String(), agents: map[[32]byte]*Agent{}}
	h.srv = &http.Server{Handler: http.HandlerFunc(h.serve), ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	h.wg.Go(func() { _ = h.srv.Serve(ln) })
	return h, nil
}

// URL is where the hub listens, on the host.
func (h *Hub) URL() string { return h.url }

// Add gives a an endpoint: the token its calls carry.
func (h *Hub) Add(a *Agent) (token string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = "massgen-tools-" + hex.EncodeToString(b)
	h.mu.Lock()
	h.agents[sha256.Sum256([]byte(token))] = a
	h.mu.Unlock()
	return token
}

// Close stops the hub and waits for the calls in flight.
func (h *Hub) Close() error {
	err := h.srv.Close()
	h.wg.Wait()
	return err
}

type callRequest struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

type callResponse struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/call" {
		http.Error(w, "massgen's tool endpoint has only /call", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST a call to /call", http.StatusMethodNotAllowed)
		return
	}
	tok, ok := bearer(r.Header.Get("Authorization"))
	var a *Agent
	if ok {
		h.mu.Lock()
		a = h.agents[sha256.Sum256([]byte(tok))]
		h.mu.Unlock()
	}
	if a == nil {
		http.Error(w, "no valid token: massgen's tool endpoint serves the commands it runs for an agent", http.StatusUnauthorized)
		return
	}
	var req callRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	if err := dec.Decode(&req); err != nil || req.Server == "" || req.Tool == "" {
		http.Error(w, `the body must be {"server": ..., "tool": ..., "arguments": {...}}`, http.StatusBadRequest)
		return
	}
	if len(req.Arguments) == 0 || string(req.Arguments) == "null" {
		req.Arguments = json.RawMessage("{}")
	}
	res, err := a.Call(r.Context(), req.Server, req.Tool, req.Arguments)
	if errors.Is(err, ErrNotGiven) {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(callResponse{Content: res.Content, IsError: res.IsError})
}

func bearer(h string) (string, bool) {
	const p = "Bearer "
	if len(h) <= len(p) || h[:len(p)] != p {
		return "", false
	}
	return h[len(p):], true
}
