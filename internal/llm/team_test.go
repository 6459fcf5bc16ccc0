package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/llm/chatcompat"
	"github.com/massgen/massgen/internal/llm/llmtest"
)

// These tests build teams as massgen does — several models on one
// OpenAI-compatible endpoint (one OpenRouter or vLLM base URL), each model
// wrapped in the team's guards — and check that one model's trouble stays
// that model's.

// teamMember is one agent of a test team.
type teamMember struct {
	name  string
	model llm.Model
}

// fastRetries keeps the retry schedule's shape (backoff with jitter,
// retry-after honoured) at test scale.
func fastRetries(onRetry func(model string, err error, d time.Duration)) func(model string) llm.RetryPolicy {
	return func(model string) llm.RetryPolicy {
		return llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
			OnRetry: func(_ context.Context, _ int, err error, d time.Duration) {
				if onRetry != nil {
					onRetry(model, err, d)
				}
			}}
	}
}

// buildTeam wires one chat-completions model per name on baseURL, as the
// CLI's team builder does.
func buildTeam(baseURL string, retries func(model string) llm.RetryPolicy, models ...string) []teamMember {
	// The breaker's cooldown at test scale too.
	guards := &llm.Guards{Breaker: llm.BreakerPolicy{Cooldown: 20 * time.Millisecond}}
	var team []teamMember
	for _, name := range models {
		m := chatcompat.New(chatcompat.Options{Provider: "openrouter", BaseURL: baseURL, APIKey: "k", Model: name, Stream: true})
		m = guards.Wrap(m, llm.Route{Provider: "openrouter", Endpoint: baseURL, Model: name}, retries(name))
		team = append(team, teamMember{name, m})
	}
	return team
}

// turn runs one request of every member at once and returns their errors.
func turn(ctx context.Context, team []teamMember) []error {
	errs := make([]error, len(team))
	var wg sync.WaitGroup
	for i, a := range team {
		wg.Go(func() {
			_, errs[i] = llmtest.Collect(a.model.Stream(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}))
		})
	}
	wg.Wait()
	return errs
}

// answer streams a short successful chat completion.
func answer(w http.ResponseWriter, model string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range []string{
		`{"id":"c","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{"content":"hello"}}]}`,
		`{"id":"c","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	} {
		fmt.Fprintf(w, "data: "+c+"\n\n", model)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func requestModel(r *http.Request) string {
	var body struct {
		Model string `json:"model"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	return body.Model
}

func TestSharedEndpointOneModelAlways500LeavesTheOthersHealthy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model := requestModel(r)
		if model == "broken" {
			http.Error(w, `{"error":{"message":"upstream provider error"}}`, http.StatusInternalServerError)
			return
		}
		answer(w, model)
	}))
	defer srv.Close()
	defer llm.HTTPClient.CloseIdleConnections()
	team := buildTeam(srv.URL, fastRetries(nil), "healthy-a", "broken", "healthy-b")
	// Enough turns for the broken model to open its circuit several times
	// over: whatever it does, the healthy models answer every turn.
	for round := range 5 {
		errs := turn(t.Context(), team)
		for i, err := range errs {
			switch team[i].name {
			case "broken":
				if err == nil {
					t.Fatalf("round %d: the broken model succeeded", round)
				}
			default:
				if err != nil {
					t.Fatalf("round %d: healthy model %s failed: %v", round, team[i].name, err)
				}
			}
		}
	}
}

func TestSharedEndpointOneTransient503PerModelIsRetriedAfterRetryAfter(t *testing.T) {
	var mu sync.Mutex
	failed := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model := requestModel(r)
		mu.Lock()
		first := !failed[model]
		failed[model] = true
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "0.02")
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		answer(w, model)
	}))
	defer srv.Close()
	defer llm.HTTPClient.CloseIdleConnections()
	var waits sync.Map // model → the delay before its retry
	team := buildTeam(srv.URL, fastRetries(func(model string, _ error, d time.Duration) { waits.Store(model, d) }), "a", "b", "c")
	for i, err := range turn(t.Context(), team) {
		if err != nil {
			t.Fatalf("model %s: %v; want one transient 503 per model retried", team[i].name, err)
		}
		d, _ := waits.Load(team[i].name)
		if d != 20*time.Millisecond {
			t.Errorf("model %s waited %v before its retry, want the 20ms its Retry-After asked for", team[i].name, d)
		}
	}
}

// resettingListener resets the first n connections it accepts, as a server
// whose listen backlog overflows does under a burst of connections.
type resettingListener struct {
	net.Listener
	resets atomic.Int64
}

func (l *resettingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.resets.Add(-1) < 0 {
			return c, err
		}
		_ = c.(*net.TCPConn).SetLinger(0) // close with RST
		_ = c.Close()
	}
}

func TestSharedEndpointConnectionResetBurstIsRetried(t *testing.T) {
	const agents, resets = 64, 21
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer(w, requestModel(r))
	}))
	rl := &resettingListener{Listener: srv.Listener}
	rl.resets.Store(resets)
	srv.Listener = rl
	srv.Start()
	defer srv.Close()
	// A cold pool: every agent dials.
	llm.HTTPClient.CloseIdleConnections()
	defer llm.HTTPClient.CloseIdleConnections()
	models := make([]string, agents)
	for i := range models {
		models[i] = "qwen" // one vLLM model served to the whole team
	}
	var retried atomic.Int64
	retries := fastRetries(func(string, error, time.Duration) { retried.Add(1) })
	// Resets are counted, not timed: under a slow race-detector run one
	// agent's quick retries can meet several of them in a row. Enough
	// attempts for the worst case keep the test about classification
	// (a reset is retried), not about luck.
	team := buildTeam(srv.URL, func(model string) llm.RetryPolicy {
		p := retries(model)
		p.MaxAttempts = resets + 1
		return p
	}, models...)
	failures := 0
	for i, err := range turn(t.Context(), team) {
		if err != nil {
			failures++
			t.Errorf("agent %d: %v", i, err)
		}
	}
	if failures > 0 || retried.Load() == 0 {
		t.Fatalf("%d of %d agents failed after %d retries; want every reset retried", failures, agents, retried.Load())
	}
}

func TestOpenCircuitErrorsAreMarked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	defer llm.HTTPClient.CloseIdleConnections()
	guards := &llm.Guards{Breaker: llm.BreakerPolicy{Threshold: 1, Cooldown: time.Hour, MaxWait: time.Millisecond}}
	m := chatcompat.New(chatcompat.Options{Provider: "vllm", BaseURL: srv.URL, APIKey: "k", Model: "m", Stream: true})
	m = guards.Wrap(m, llm.Route{Provider: "vllm", Endpoint: srv.URL, Model: "m"}, llm.RetryPolicy{MaxAttempts: 1})
	_, first := llmtest.Collect(m.Stream(t.Context(), &llm.Request{}))
	if first == nil || errors.Is(first, llm.ErrCircuitOpen) {
		t.Fatalf("first error = %v; want the endpoint's own failure, not marked as a circuit error", first)
	}
	_, second := llmtest.Collect(m.Stream(t.Context(), &llm.Request{}))
	if !errors.Is(second, llm.ErrCircuitOpen) {
		t.Fatalf("second error = %v; want errors.Is(err, llm.ErrCircuitOpen)", second)
	}
	e, ok := errors.AsType[*llm.Error](second)
	if !ok || e.Provider != "vllm" || e.Model != "m" {
		t.Errorf("second error = %#v; want an *llm.Error naming provider and model", second)
	}
	open := guards.Open()
	if open == nil || open.Wait <= 0 || open.Wait > time.Hour {
		t.Errorf("guards.Open() = %+v; want the open circuit and the wait until its trial", open)
	}
}
