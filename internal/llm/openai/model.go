package openai

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llm"
)

// Options configures one Responses endpoint.
type Options struct {
	Provider   string            // backend type for error messages; default "openai"
	BaseURL    string            // default https://api.openai.com/v1
	APIKey     string            // sent as a bearer token; none when empty
	Model      string            // default model when Request.Model is ""
	HTTPClient *http.Client      // optional
	Headers    map[string]string // optional extra headers
}

type model struct {
	provider string
	baseURL  string
	model    string
	svc      responses.ResponseService
	// fallbacks remembers, per model name, how much of the default reasoning
	// object the server accepted (a reasoningFallback), so that a refusal
	// costs one extra request per model, not one per turn.
	fallbacks sync.Map
}

// New returns a Model that talks to the Responses endpoint at o.BaseURL.
func New(o Options) llm.Model {
	base := strings.TrimRight(cmp.Or(o.BaseURL, "https://api.openai.com/v1"), "/")
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		// Always set, even when empty: an empty key means "send no
		// Authorization header", never "fall back to something else".
		option.WithAPIKey(o.APIKey),
		// Retries are ours (llm.WithRetry), and only before the first
		// chunk: the SDK cannot know whether output was already shown.
		option.WithMaxRetries(0),
		option.WithHTTPClient(cmp.Or(o.HTTPClient, llm.HTTPClient)),
	}
	for k, v := range o.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &model{
		provider: cmp.Or(o.Provider, "openai"),
		baseURL:  base,
		model:    o.Model,
		// The service is built directly rather than through
		// openai.NewClient, which folds OPENAI_BASE_URL, OPENAI_API_KEY,
		// OPENAI_ORG_ID, OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS from
		// the environment into every request: configuration comes from
		// massgen's config, which has already read the environment.
		svc: responses.NewResponseService(opts...),
	}
}

// Stream sends req and yields the response. The request is made when the
// iteration starts, so ranging over the sequence twice sends it twice.
func (m *model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		modelName := cmp.Or(req.Model, m.model)
		for {
			fb := m.fallback(modelName)
			params, added, err := buildParams(req, modelName, fb)
			if err != nil {
				yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Message: "invalid request: " + err.Error(), Err: err})
				return
			}
			err = m.streaming(ctx, modelName, params, yield)
			if err == nil {
				return
			}
			// A refusal comes as an HTTP 400, before any chunk, so sending
			// the request again cannot splice two answers together.
			if next, ok := nextFallback(err, added, fb); ok {
				m.fallbacks.Store(modelName, next)
				continue
			}
			yield(llm.Chunk{}, err)
			return
		}
	}
}

func (m *model) fallback(modelName string) reasoningFallback {
	if v, ok := m.fallbacks.Load(modelName); ok {
		return v.(reasoningFallback)
	}
	return fullDefault
}

// nextFallback decides whether a failed request was the server refusing
// reasoning settings the adapter added on its own (not the user's), and if
// so how much of them to leave out next time. The common case: an
// organisation that has not been verified may not request reasoning
// summaries ("param": "reasoning.summary"); its agents should still run.
func nextFallback(err error, added defaults, fb reasoningFallback) (reasoningFallback, bool) {
	if !added.summary && !added.effort {
		return fb, false
	}
	e, ok := errors.AsType[*llm.Error](err)
	if !ok || e.Status != http.StatusBadRequest {
		return fb, false
	}
	var param string
	if apiErr, ok := errors.AsType[*responses.Error](err); ok {
		param = apiErr.Param
	}
	// The parameter the server names decides; the message is read only when
	// it names none, and only for the summary, so that an unrelated 400
	// ("temperature is not supported with reasoning models") costs no
	// second request and keeps the defaults.
	switch {
	case added.summary && param == "reasoning.summary":
		return noSummary, true
	case strings.HasPrefix(param, "reasoning"):
		return noDefault, true
	case param == "" && added.summary && strings.Contains(strings.ToLower(e.Message), "reasoning summar"):
		return noSummary, true
	}
	return fb, false
}

// streaming runs one SSE request and yields its chunks as they arrive. It
// returns the failure to report, or nil when the response finished or the
// consumer stopped.
func (m *model) streaming(ctx context.Context, modelName string, params responses.ResponseNewParams, yield func(llm.Chunk, error) bool) error {
	probe := &wireProbe{}
	stream := m.svc.NewStreaming(ctx, params, option.WithMiddleware(probe.middleware))
	// Close on every exit path: on an early break by the consumer, or after
	// the terminal event, it closes the response body, which ends the HTTP
	// exchange at once.
	defer stream.Close()

	var acc accumulator
	for stream.Next() {
		chunks, failure := acc.add(stream.Current())
		for _, c := range chunks {
			if !yield(c, nil) {
				return nil
			}
		}
		if failure != nil {
			return m.eventError(modelName, failure)
		}
		if acc.finished() {
			return nil
		}
	}
	if err := stream.Err(); err != nil {
		if !probe.ok() {
			return m.requestError(ctx, modelName, err, probe)
		}
		return m.streamError(ctx, modelName, err)
	}
	if ctx.Err() != nil {
		return canceled(ctx.Err())
	}
	return &llm.Error{Provider: m.provider, Model: modelName, Retry: true,
		Message: "stream ended before the response finished"}
}

// wireProbe watches the HTTP exchange under the SDK: it keeps the status,
// headers and body of an error response, which the SDK drops when the body
// is not the JSON it expects.
type wireProbe struct {
	status  int
	header  http.Header
	errBody []byte
}

// maxErrBody bounds how much of an error response is kept.
const maxErrBody = 64 << 10

func (p *wireProbe) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	p.status, p.header = res.StatusCode, res.Header
	if res.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrBody))
		_ = res.Body.Close()
		p.errBody = body
		res.Body = io.NopCloser(bytes.NewReader(body))
	}
	return res, nil
}

// ok reports whether a successful response arrived.
func (p *wireProbe) ok() bool { return p.status >= 200 && p.status < 300 }
