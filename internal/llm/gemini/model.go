package gemini

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/massgen/massgen/internal/llm"
)

// Options configures one Gemini API endpoint.
type Options struct {
	Provider   string            // backend type for error messages; default "gemini"
	BaseURL    string            // default https://generativelanguage.googleapis.com (a trailing /v1beta or /v1 picks the API version)
	APIKey     string            // sent as x-goog-api-key; none when empty
	Model      string            // default model when Request.Model is ""
	HTTPClient *http.Client      // optional
	Headers    map[string]string // optional extra headers
}

// DefaultBaseURL is the public Gemini API endpoint.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// defaultAPIVersion is the API version used unless the base URL names one.
// v1beta is where every current feature (thinking, parametersJsonSchema,
// function-call ids) lives.
const defaultAPIVersion = "v1beta"

// maxHops bounds how many times one response is continued after the API
// ended a stream with finish reason CONTINUATION.
const maxHops = 32

type model struct {
	provider string
	baseURL  string // as configured, for messages
	root     string // baseURL without its API version
	version  string // API version
	model    string
	apiKey   string
	headers  http.Header
	client   *http.Client
}

// versionSuffix matches an API version at the end of a base URL path.
var versionSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v\d+((alpha|beta)\d*)?$`) })

// New returns a Model that talks to the Gemini API at o.BaseURL.
func New(o Options) llm.Model {
	base := strings.TrimRight(cmp.Or(o.BaseURL, DefaultBaseURL), "/")
	root, version := splitVersion(base)
	headers := http.Header{}
	for k, v := range o.Headers {
		headers.Set(k, v)
	}
	return &model{
		provider: cmp.Or(o.Provider, "gemini"),
		baseURL:  base,
		root:     root,
		version:  version,
		model:    o.Model,
		apiKey:   o.APIKey,
		headers:  headers,
		client:   cmp.Or(o.HTTPClient, llm.HTTPClient),
	}
}

// splitVersion separates an API version at the end of the base URL
// ("…/v1beta") from the root the SDK joins paths onto, so that a base URL
// copied from the API reference does not yield ".../v1beta/v1beta/models".
func splitVersion(base string) (root, version string) {
	u, err := url.Parse(base)
	if err != nil {
		return base, defaultAPIVersion
	}
	dir, last, ok := cutLast(u.Path, "/")
	if !ok || !versionSuffix().MatchString(last) {
		return base, defaultAPIVersion
	}
	u.Path = dir
	return strings.TrimRight(u.String(), "/"), last
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// Stream sends req and yields the response. The request is made when the
// iteration starts, so ranging over the sequence twice sends it twice.
func (m *model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		modelName := cmp.Or(req.Model, m.model)
		models, err := sdkModels()
		if err != nil {
			yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName,
				Message: "cannot create the Gemini client: " + err.Error(), Err: err})
			return
		}
		contents, config, err := buildRequest(req, modelName)
		if err != nil {
			yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Message: "invalid request: " + err.Error(), Err: err})
			return
		}
		if config.HTTPOptions == nil {
			config.HTTPOptions = &genai.HTTPOptions{}
		}
		config.HTTPOptions.BaseURL = m.root + "/"
		config.HTTPOptions.APIVersion = m.version
		config.HTTPOptions.Headers = m.headers.Clone()
		m.stream(ctx, models, modelName, contents, config, yield)
	}
}

// stream runs the streaming request, and the follow-up requests when the API
// asks for a continuation, translating responses as they arrive.
func (m *model) stream(ctx context.Context, models *genai.Models, modelName string, contents []*genai.Content, config *genai.GenerateContentConfig, yield func(llm.Chunk, error) bool) {
	var tr translator
	for hop := 1; ; hop++ {
		x := &exchange{client: m.client, apiKey: m.apiKey}
		var failure error
		// Breaking out of (or returning from) this loop makes the SDK's
		// iterator close the response body, which ends the HTTP exchange
		// at once.
		for resp, err := range models.GenerateContentStream(context.WithValue(ctx, exchangeKey{}, x), modelName, contents, config) {
			if err != nil {
				failure = err
				break
			}
			for _, c := range tr.add(resp) {
				if !yield(c, nil) {
					return
				}
			}
		}
		if ctx.Err() != nil {
			yield(llm.Chunk{}, canceled(ctx.Err()))
			return
		}
		if failure != nil && !x.ok() {
			yield(llm.Chunk{}, m.requestError(modelName, failure, x))
			return
		}
		// A stream that broke after its finish reason only lost what came
		// after it: the answer is kept rather than paid for twice.
		if (failure != nil || x.readErr != nil) && !tr.finished() {
			yield(llm.Chunk{}, m.streamError(modelName, failure, x))
			return
		}
		if token := tr.continuation(); token != nil {
			if hop >= maxHops {
				yield(llm.Chunk{}, &llm.Error{Provider: m.provider, Model: modelName, Retry: true,
					Message: fmt.Sprintf("response still unfinished after %d continuation requests", maxHops)})
				return
			}
			next := *config
			next.ContinuationToken = token
			config = &next
			continue
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
		return
	}
}
