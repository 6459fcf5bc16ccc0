package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/massgen/massgen/internal/llmsim"
)

// bodySim is a simulator that keeps the JSON bodies of the model requests
// it gets.
type bodySim struct {
	url    string
	mu     sync.Mutex
	bodies []map[string]any
}

func startBodySim(t *testing.T) *bodySim {
	t.Helper()
	sim := llmsim.New(nil)
	t.Cleanup(func() { _ = sim.Close() })
	bs := &bodySim{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		bs.mu.Lock()
		bs.bodies = append(bs.bodies, m)
		bs.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(raw))
		sim.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	bs.url = hs.URL + "/v1"
	return bs
}

func (bs *bodySim) all() []map[string]any {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return bs.bodies
}

// A client's sampling parameters reach every model request of a
// single-model run, and none of a config's team.
func TestSamplingParametersGoToSingleModelRuns(t *testing.T) {
	bs := startBodySim(t)
	f := start(t, setup{
		env:     map[string]string{"GROQ_API_KEY": "k", "MASSGEN_GROQ_BASE_URL": bs.url},
		configs: map[string]string{"team.yaml": "agent: {id: a, backend: {type: groq, model: llama-3.3-70b-versatile, temperature: 0.9}}\n"},
	})
	p := ask("groq/llama-3.3-70b-versatile", "What is 2+2?")
	p.Temperature = openai.Float(0.25)
	p.TopP = openai.Float(0.5)
	p.MaxCompletionTokens = openai.Int(300)
	if _, err := f.client.Chat.Completions.New(ctx10(t), p); err != nil {
		t.Fatal(err)
	}
	single := bs.all()
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
	for i, b := range bs.all()[len(single):] {
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
