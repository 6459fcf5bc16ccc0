package anthropic

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"iter"
	"mime"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/massgen/massgen/internal/llm"
)

// Options configures one Anthropic Messages endpoint.
type Options struct {
	Provider   string            // backend type for error messages; default "claude"
	BaseURL    string            // default https://api.anthropic.com (a trailing /v1 is accepted)
	APIKey     string            // sent as x-api-key; none when empty
	Model      string            // default model when Request.Model is ""
	HTTPClient *http.Client      // optional
	Headers    map[string]string // optional extra headers
	// MaxTokens is the answer budget when Params has no max_tokens: the
	// Messages API requires one. Default 8192.
	MaxTokens int
}

const (
	defaultBaseURL   = "https://api.anthropic.com"
	defaultMaxTokens = 8192
)

type model struct {
	provider  string
	baseURL   string
	model     string
	maxTokens int64
	svc       anthropic.MessageService
	thinking  *thinkingMemory
}

// New returns a Model that talks to the Messages API at o.BaseURL.
func New(o Options) llm.Model {
	base := strings.TrimRight(cmp.Or(o.BaseURL, defaultBaseURL), "/")
	// The SDK appends /v1/messages itself. Configurations (and massgen's
	// provider catalogue) often carry the OpenAI-style ".../v1" base, and
	// /v1/v1/messages is never right.
	base = strings.TrimSuffix(base, "/v1")
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		// Retries are ours (llm.WithRetry), and only before the first
		// chunk: the SDK cannot know whether output was already shown.
		option.WithMaxRetries(0),
		option.WithHTTPClient(cmp.Or(o.HTTPClient, llm.HTTPClient)),
		// Spans and trace headers would otherwise be governed by
		// ANTHROPIC_OPEN_TELEMETRY* variables; massgen does not trace
		// through the SDK.
		option.WithoutOpenTelemetry(),
	}
	if o.APIKey != "" {
		// The key goes in x-api-key, the header every Anthropic endpoint
		// and compatible proxy accepts. option.WithAPIKey in this SDK
		// version sends it as a bearer token instead.
		opts = append(opts, option.WithHeader("X-Api-Key", o.APIKey))
	}
	for k, v := range o.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &model{
		provider:  cmp.Or(o.Provider, "claude"),
		baseURL:   base,
		model:     o.Model,
		maxTokens: int64(cmp.Or(max(o.MaxTokens, 0), defaultMaxTokens)),
		// The service is built directly rather than through
		// anthropic.NewClient, which reads ANTHROPIC_API_KEY,
		// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL, ANTHROPIC_CUSTOM_HEADERS,
		// profiles on disk and federation settings: the caller decides
		// where keys and URLs come from.
		svc:      anthropic.NewMessageService(opts...),
		thinking: newThinkingMemory(),
	}
}

// Stream sends req and yields the response. The request is made when the
// iteration starts, so ranging over the sequence twice sends it twice.
func (m *model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		modelName := cmp.Or(req.Model, m.model)
		b, err := m.buildParams(req, modelName)
		if err != nil {
			yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Message: "invalid request: " + err.Error(), Err: err})
			return
		}
		m.streaming(ctx, modelName, b, yield)
	}
}

// streaming runs one SSE request and translates its events as they arrive.
func (m *model) streaming(ctx context.Context, modelName string, b built, yield func(llm.Chunk, error) bool) {
	probe := &wireProbe{}
	opts := append(b.opts, option.WithMiddleware(probe.middleware))
	stream := m.svc.NewStreaming(ctx, b.params, opts...)
	// Close on every exit path: on an early break by the consumer it closes
	// the response body, which ends the HTTP exchange at once.
	defer stream.Close()

	tr := translator{memory: m.thinking}
	for stream.Next() {
		for _, c := range tr.add(stream.Current()) {
			if !yield(c, nil) {
				return
			}
		}
		if tr.stopped {
			// message_stop is the last event: do not wait on a server or
			// proxy that keeps the connection open after it.
			break
		}
	}
	if err := stream.Err(); err != nil {
		switch {
		case !probe.ok():
			yield(llm.Chunk{}, m.requestError(ctx, modelName, err))
			return
		case ctx.Err() != nil || !tr.finished():
			yield(llm.Chunk{}, m.streamError(ctx, modelName, err))
			return
		}
		// The response had said why it stopped (message_delta) when the
		// connection broke, so only message_stop is missing: keep the
		// answer rather than pay for it twice.
	}
	if ctx.Err() != nil {
		yield(llm.Chunk{}, canceled(ctx.Err()))
		return
	}
	if probe.whole != nil && !tr.started {
		// A server (or proxy) that ignored "stream": true and sent the
		// whole message as JSON.
		m.wholeMessage(modelName, probe.whole, yield)
		return
	}
	if !tr.finished() {
		yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Retry: true,
			Message: "stream ended before the response finished"})
		return
	}
	for _, c := range tr.final() {
		if !yield(c, nil) {
			return
		}
	}
}

// wholeMessage yields a non-streamed Message in stream order.
func (m *model) wholeMessage(modelName string, body []byte, yield func(llm.Chunk, error) bool) {
	var msg anthropic.Message
	err := errNotAMessage
	if json.Valid(body) {
		err = msg.UnmarshalJSON(body)
	}
	if err == nil && msg.Type != "message" {
		err = errNotAMessage
	}
	if err != nil {
		yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Retry: true,
			Message: "unreadable response: " + llm.ShortCause(err), Err: err})
		return
	}
	for _, c := range messageChunks(&msg, m.thinking) {
		if !yield(c, nil) {
			return
		}
	}
}

// wireProbe watches the HTTP exchange under the SDK: it keeps the status of
// the response, so a failure can be told apart as "the request failed" or
// "the stream broke", and takes aside a whole JSON message sent in place of
// an event stream.
type wireProbe struct {
	status int
	whole  []byte
}

// maxWhole bounds a non-streamed message body read into memory.
const maxWhole = 64 << 20

func (p *wireProbe) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	p.status = res.StatusCode
	if p.ok() && isJSON(res.Header.Get("Content-Type")) {
		body, err := io.ReadAll(io.LimitReader(res.Body, maxWhole))
		_ = res.Body.Close()
		if err != nil {
			return nil, err
		}
		p.whole = body
		// The SDK's event decoder sees an empty stream.
		res.Body = io.NopCloser(bytes.NewReader(nil))
	}
	return res, nil
}

// ok reports whether a successful response arrived.
func (p *wireProbe) ok() bool { return p.status >= 200 && p.status < 300 }

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
