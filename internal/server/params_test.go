package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/massgen/massgen/internal/llmsim"
)

// bodyRecorder keeps the bodies of the requests a handler gets while it
// records.
type bodyRecorder struct {
	on     atomic.Bool
	mu     sync.Mutex
	bodies [][]byte
}

func (b *bodyRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b.on.Load() {
			raw, _ := io.ReadAll(r.Body)
			b.mu.Lock()
			b.bodies = append(b.bodies, raw)
			b.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(raw))
		}
		h.ServeHTTP(w, r)
	})
}

// start records from now on, forgetting what was recorded before.
func (b *bodyRecorder) start() {
	b.mu.Lock()
	b.bodies = nil
	b.mu.Unlock()
	b.on.Store(true)
}

// stop ends recording and returns the bodies recorded.
func (b *bodyRecorder) stop() [][]byte {
	b.on.Store(false)
	return b.recorded()
}

func (b *bodyRecorder) recorded() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.bodies)
}

// startBodySim starts a simulator that records the JSON bodies of the model
// requests it gets; it returns its base URL (…/v1).
func startBodySim(t *testing.T) (*bodyRecorder, string) {
	t.Helper()
	sim := llmsim.New(nil)
	t.Cleanup(func() { _ = sim.Close() })
	rec := &bodyRecorder{}
	rec.start()
	hs := httptest.NewServer(rec.wrap(sim.Handler()))
	t.Cleanup(hs.Close)
	return rec, hs.URL + "/v1"
}

// decoded is the recorded bodies, as JSON objects.
func decoded(t *testing.T, raw [][]byte) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(raw))
	for i, b := range raw {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatalf("request %d is not JSON: %v", i, err)
		}
	}
	return out
}

// A client's sampling parameters reach every model request of a
// single-model run, and none of a config's team.
func TestSamplingParametersGoToSingleModelRuns(t *testing.T) {
	rec, url := startBodySim(t)
	f := start(t, setup{
		env:     map[string]string{"GROQ_API_KEY": "k", "MASSGEN_GROQ_BASE_URL": url},
		configs: map[string]string{"team.yaml": "agent: {id: a, backend: {type: groq, model: llama-3.3-70b-versatile, temperature: 0.9}}\n"},
	})
	p := ask("groq/llama-3.3-70b-versatile", "What is 2+2?")
	p.Temperature = openai.Float(0.25)
	p.TopP = openai.Float(0.5)
	p.MaxCompletionTokens = openai.Int(300)
	if _, err := f.client.Chat.Completions.New(ctx10(t), p); err != nil {
		t.Fatal(err)
	}
	single := decoded(t, rec.recorded())
	if len(single) == 0 {
		t.Fatal("no model request was made")
	}
	for i, b := range single {
		if b["temperature"] != 0.25 || b["top_p"] != 0.5 || b["max_tokens"] != float64(300) {
			t.Errorf("request %d: temperature %v, top_p %v, max_tokens %v; want 0.25, 0.5, 300", i, b["temperature"], b["top_p"], b["max_tokens"])
		}
	}

	p.Model = "massgen/team"
	if _, err := f.client.Chat.Completions.New(ctx10(t), p); err != nil {
		t.Fatal(err)
	}
	for i, b := range decoded(t, rec.recorded())[len(single):] {
		if b["temperature"] != 0.9 || b["top_p"] != nil || b["max_tokens"] != nil {
			t.Errorf("team request %d: temperature %v, top_p %v, max_tokens %v; want the config's 0.9 and nothing else", i, b["temperature"], b["top_p"], b["max_tokens"])
		}
	}
}

func TestInvalidSamplingParametersAre400(t *testing.T) {
	f := start(t, setup{})
	for _, body := range []string{
		`{"model":"massgen","temperature":3,"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"massgen","top_p":-1,"messages":[{"role":"user","content":"q"}]}`,
		`{"model":"massgen","max_tokens":0,"messages":[{"role":"user","content":"q"}]}`,
	} {
		resp, err := f.hc.Post(f.url+"/v1/chat/completions", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Param, Code string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 400 || e.Error.Code != "invalid_value" || e.Error.Param == "" {
			t.Errorf("%s: status %d, error %+v; want 400 invalid_value naming the parameter", body, resp.StatusCode, e.Error)
		}
	}
}
