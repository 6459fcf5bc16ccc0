package gemini

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/massgen/massgen/internal/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sse renders events as the Gemini API sends them (CRLF-separated).
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "data: %s\r\n\r\n", e)
	}
	return b.String()
}

func serveSSE(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

func newModel(t *testing.T, h http.Handler) llm.Model {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return New(Options{Provider: "test", BaseURL: srv.URL, APIKey: "key-test", Model: "gemini-2.5-flash", HTTPClient: srv.Client()})
}

var hello = &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

// textEvent is a streamed response carrying one text part.
func textEvent(s string) string {
	b, _ := json.Marshal(s)
	return fmt.Sprintf(`{"candidates":[{"content":{"parts":[{"text":%s}],"role":"model"},"index":0}]}`, b)
}

const stopEvent = `{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}`
