package gemini

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"google.golang.org/genai"
)

// placeholderKey stands in for the API key in the shared SDK client; the
// dispatcher replaces it with the model's own key, or removes it.
const placeholderKey = "massgen-placeholder"

// sdkModels is the process's one genai client. Each request carries its
// model's endpoint, headers and key (HTTPOptions and the request context),
// so one client serves every model.
//
// One client rather than one per model because genai.NewClient consults the
// environment every time: it logs a warning through the standard logger
// whenever both GOOGLE_API_KEY and GEMINI_API_KEY are set, even when it is
// given a key. Everything it could take from the environment is passed
// explicitly: the backend (GOOGLE_GENAI_USE_VERTEXAI), a key (GOOGLE_API_KEY,
// GEMINI_API_KEY) and a base URL (GOOGLE_GEMINI_BASE_URL,
// genai.SetDefaultBaseURLs).
var sdkModels = sync.OnceValues(func() (*genai.Models, error) {
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		Backend:    genai.BackendGeminiAPI,
		APIKey:     placeholderKey,
		HTTPClient: &http.Client{Transport: dispatcher{}},
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    DefaultBaseURL + "/",
			APIVersion: defaultAPIVersion,
			// RetryOptions stays nil: no SDK retries. llm.WithRetry
			// retries, and only before the first chunk.
		},
	})
	if err != nil {
		return nil, err
	}
	return c.Models, nil
})

// exchangeKey carries a request's *exchange to the dispatcher.
type exchangeKey struct{}

// exchange is one HTTP exchange of a model: what the dispatcher needs to
// send it (the model's client and key), and what it saw under the SDK: the
// status, headers and body of an error response (the SDK turns a non-JSON
// or array-shaped body into an opaque message and drops the headers), and
// the error that broke a successful response's body.
type exchange struct {
	client *http.Client
	apiKey string

	status  int
	header  http.Header
	errBody []byte
	readErr error
}

// ok reports whether a successful response arrived.
func (x *exchange) ok() bool { return x.status >= 200 && x.status < 300 }

// maxErrBody bounds how much of an error response is kept.
const maxErrBody = 64 << 10

// dispatcher is the transport of the shared SDK client: it sends each
// request with its model's HTTP client and key, and watches the response.
type dispatcher struct{}

func (dispatcher) RoundTrip(req *http.Request) (*http.Response, error) {
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return nil, errors.New("gemini: request made outside the adapter")
	}
	// A RoundTripper must not change the request it was given.
	req = req.Clone(req.Context())
	req.Header.Del("X-Goog-Api-Key")
	if x.apiKey != "" {
		req.Header.Set("X-Goog-Api-Key", x.apiKey)
	}
	res, err := x.client.Do(req)
	if err != nil {
		return nil, err
	}
	x.status, x.header = res.StatusCode, res.Header
	if res.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrBody))
		_ = res.Body.Close()
		x.errBody = body
		res.Body = io.NopCloser(bytes.NewReader(body))
		return res, nil
	}
	res.Body = &bodyProbe{rc: res.Body, x: x}
	return res, nil
}

// bodyProbe records the error that ends a response body and shows the SDK a
// clean end instead. The SDK writes scanner errors to the standard logger
// (which would scribble over a terminal UI); a cut stream is still caught,
// because the response then lacks its finish reason and readErr says why.
type bodyProbe struct {
	rc io.ReadCloser
	x  *exchange
}

func (b *bodyProbe) Read(buf []byte) (int, error) {
	n, err := b.rc.Read(buf)
	if err != nil && err != io.EOF {
		b.x.readErr = err
		err = io.EOF
	}
	return n, err
}

func (b *bodyProbe) Close() error { return b.rc.Close() }
