package chatcompat

import (
	"bytes"
	"cmp"
	"context"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/massgen/massgen/internal/llm"
)

// Options configures one Chat Completions endpoint.
type Options struct {
	Provider string // backend type for error messages, e.g. "groq", "sim"
	BaseURL  string // e.g. https://api.groq.com/openai/v1; default https://api.openai.com/v1
	APIKey   string // sent as a bearer token; none when empty
	Model    string // default model when Request.Model is ""
	// Stream false sends `stream: false` (for servers that cannot stream
	// tool calls); the response is still yielded as chunks.
	Stream     bool
	HTTPClient *http.Client      // optional
	Headers    map[string]string // optional extra headers
}

type model struct {
	provider string
	baseURL  string
	model    string
	stream   bool
	svc      openai.ChatCompletionService
}

// New returns a Model that talks to the Chat Completions endpoint at
// o.BaseURL.
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
		provider: cmp.Or(o.Provider, "chatcompletion"),
		baseURL:  base,
		model:    o.Model,
		stream:   o.Stream,
		// The service is built directly rather than through
		// openai.NewClient, which folds OPENAI_BASE_URL, OPENAI_API_KEY,
		// OPENAI_ORG_ID, OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS from
		// the environment into every request: those belong to OpenAI and
		// must not travel to Groq or a local vLLM.
		svc: openai.NewChatCompletionService(opts...),
	}
}

// Stream sends req and yields the response. The request is made when the
// iteration starts, so ranging over the sequence twice sends it twice.
func (m *model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		modelName := cmp.Or(req.Model, m.model)
		params, err := buildParams(req, modelName, m.stream)
		if err != nil {
			yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Message: "invalid request: " + err.Error(), Err: err})
			return
		}
		if m.stream {
			m.streaming(ctx, modelName, params, yield)
		} else {
			m.complete(ctx, modelName, params, yield)
		}
	}
}

// streaming runs one SSE request and translates its chunks as they arrive.
func (m *model) streaming(ctx context.Context, modelName string, params openai.ChatCompletionNewParams, yield func(llm.Chunk, error) bool) {
	probe := &wireProbe{}
	stream := m.svc.NewStreaming(ctx, params, option.WithMiddleware(probe.middleware))
	// Close on every exit path: on an early break by the consumer it closes
	// the response body, which ends the HTTP exchange at once.
	defer stream.Close()

	var acc accumulator
	for stream.Next() {
		for _, c := range acc.add(stream.Current()) {
			if !yield(c, nil) {
				return
			}
		}
	}
	if err := stream.Err(); err != nil {
		switch {
		case !probe.ok():
			yield(llm.Chunk{}, m.requestError(ctx, modelName, err, probe))
			return
		case ctx.Err() != nil || !acc.finished():
			yield(llm.Chunk{}, m.streamError(ctx, modelName, err))
			return
		}
		// The response had finished (finish_reason seen) when the
		// connection broke, so only trailing usage can be missing: keep
		// the answer rather than pay for it twice.
	}
	if ctx.Err() != nil {
		yield(llm.Chunk{}, canceled(ctx.Err()))
		return
	}
	if !acc.finished() && !probe.sawDone() {
		yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Retry: true,
			Message: "stream ended before the response finished"})
		return
	}
	for _, c := range acc.final() {
		if !yield(c, nil) {
			return
		}
	}
}

// complete runs one non-streaming request and yields its result as chunks,
// in the order a stream would have produced them.
func (m *model) complete(ctx context.Context, modelName string, params openai.ChatCompletionNewParams, yield func(llm.Chunk, error) bool) {
	probe := &wireProbe{}
	// The headers come with the whole answer: however long the model
	// writes, that is not a stall.
	res, err := m.svc.New(llm.WholeResponse(ctx), params, option.WithJSONSet("stream", false), option.WithMiddleware(probe.middleware))
	if err != nil {
		if probe.ok() && ctx.Err() == nil {
			// A 2xx whose body could not be read or decoded: a broken
			// connection or proxy, worth another try.
			yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Retry: true,
				Message: "unreadable response: " + llm.ShortCause(err), Err: err})
			return
		}
		yield(llm.Chunk{}, m.requestError(ctx, modelName, err, probe))
		return
	}
	for _, c := range completionChunks(res) {
		if !yield(c, nil) {
			return
		}
	}
}

// wireProbe watches the HTTP exchange under the SDK: it keeps the status,
// headers and body of an error response (the SDK drops bodies it cannot
// parse) and notices the `data: [DONE]` line, which the SDK's stream hides
// but which tells a complete stream from a cut one.
type wireProbe struct {
	status  int
	header  http.Header
	errBody []byte
	done    *doneSniffer
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
		return res, nil
	}
	p.done = &doneSniffer{rc: res.Body}
	res.Body = p.done
	return res, nil
}

// ok reports whether a successful response arrived.
func (p *wireProbe) ok() bool { return p.status >= 200 && p.status < 300 }

func (p *wireProbe) sawDone() bool { return p.done != nil && p.done.done }

// doneSniffer passes a response body through and records whether one of its
// lines was `data: [DONE]`. It only looks at line starts, so "[DONE]" inside
// generated text does not count.
type doneSniffer struct {
	rc   io.ReadCloser
	line []byte // start of the current line, at most len("data: [DONE]  ")
	done bool
}

func (d *doneSniffer) Read(p []byte) (int, error) {
	n, err := d.rc.Read(p)
	for _, b := range p[:n] {
		if b == '\n' || b == '\r' {
			d.endLine()
			continue
		}
		if len(d.line) < 16 {
			d.line = append(d.line, b)
		}
	}
	if err == io.EOF {
		d.endLine()
	}
	return n, err
}

func (d *doneSniffer) endLine() {
	if v, ok := bytes.CutPrefix(d.line, []byte("data:")); ok && string(bytes.TrimSpace(v)) == "[DONE]" {
		d.done = true
	}
	d.line = d.line[:0]
}

func (d *doneSniffer) Close() error { return d.rc.Close() }
