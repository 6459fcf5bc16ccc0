package server

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/event"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/store"
)

// Defaults of Deps.
const (
	DefaultMaxConcurrent = 4
	DefaultMaxQueue      = 64
	DefaultMaxBodyBytes  = 1 << 20
	DefaultBodyTimeout   = 60 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	DefaultStopWait      = 5 * time.Second
	DefaultKeepRuns      = 1000
	// DefaultKeepResponses bounds the Responses kept for
	// previous_response_id and item_reference (responses_store.go).
	DefaultKeepResponses = 1000
	DefaultKeepBytes     = 64 << 20
	// DefaultStored* bound the Responses kept in the database
	// (Deps.Responses): OpenAI keeps them 30 days.
	DefaultStoredResponses = 10000
	DefaultStoredBytes     = 256 << 20
	DefaultStoredAge       = 30 * 24 * time.Hour
)

// DefaultModel is the model id that runs the server's default config.
const DefaultModel = "massgen"

// RunRequest is one run the server asks for.
type RunRequest struct {
	// Config is the config to run (a file or @examples/NAME, from
	// Deps.Configs); Model is a single model to run in quick mode. Both
	// empty: the runner's default (the `massgen` model).
	Config, Model string
	Question      string
	History       []llm.Message
	Tools         []llm.ToolDef
	// Params are the client's sampling parameters (temperature, top_p,
	// max_tokens). The Runner applies them to single-model runs only:
	// a config's agents keep the parameters their config gives them.
	Params map[string]any
	// Output, when set, is the answer's shape the client asked for
	// (response_format, text.format): the Runner passes its Instruction to
	// the final presentation, and structured output to providers that
	// have it. The server checks the final answer against it.
	Output *OutputFormat
	// Started, when set, is called once the run has started (before its
	// first event), with its log directory ("" without logs), its live
	// view, which GET /v1/runs/{id} serves (nil: the server reads the
	// run's status.json instead), and its event broker, whose events GET
	// /v1/runs/{id}/events streams from any sequence number (nil: none).
	Started func(logDir string, view *event.View, events *event.Broker)
	// ResumeFrom, for a background response a restarted server carries
	// on, are the log directories of its earlier attempts, oldest first:
	// the Runner seeds the run with the answers and votes the fullest of
	// their replay logs holds, so that no agent is asked for them again.
	ResumeFrom []string
	// TraceParent and TraceState are the client's W3C trace context (the
	// request's traceparent and tracestate headers, when well formed):
	// the run's spans go into the client's trace.
	TraceParent, TraceState string
	// PreviousLogDir is the log directory of the run of the response a
	// Responses request continues (previous_response_id), when known: with
	// filesystem memory, its winner's memories start this run.
	PreviousLogDir string
	// Observe, when set, is called for every event of the run except the
	// agents' coordination deltas (event.TextDelta, event.ReasoningDelta;
	// event.FinalDelta is included), in order, from one goroutine, and
	// never after the Runner has returned. It may block (a slow client):
	// the run does not wait for it, only droppable deltas are then lost.
	Observe func(event.Event)
}

// RunResult is how a run ended.
type RunResult struct {
	Status    coord.RunStatus
	Final     string
	Winner    string
	LogDir    string
	ToolCalls []llm.ToolCall // client tool calls made by the winner
	Usage     llm.Usage      // summed over agents
	// Err says why the run did not complete; Failures why each agent of a
	// failed run left, as data: the error body carries them, and a run
	// whose agents were all held back by open circuit breakers is answered
	// 503 with Retry-After.
	Err      error
	Failures []coord.Failure
	// Fallback says why Final is the winner's stored answer rather than a
	// presentation (GraceExpired: the presentation ran out of time).
	Fallback     string
	GraceExpired bool
}

// Runner runs one orchestration. It returns an error only when the run
// could not start: an *Error chooses the HTTP status (400 bad config, 404
// unknown model); any other error is a 500. Cancelling ctx (the client
// went away, or the server is stopping) must cancel every model request
// of the run at once.
type Runner func(ctx context.Context, r RunRequest) (*RunResult, error)

// Deps is what the server needs. Zero values take the defaults above,
// except MaxQueue, which is literal (0 = no queue: a request that finds
// every slot taken gets 429 at once).
type Deps struct {
	Run Runner
	// Models are the ids GET /v1/models lists; default: "massgen" and the
	// keys of Configs.
	Models []string
	// Configs routes model ids "massgen/<name>" to the Config of a run
	// (a file path or "@examples/NAME").
	Configs map[string]string
	// ConfigSource, when set, is asked on each request for the configs
	// (e.g. a --config-dir read again when it changed), instead of Configs.
	ConfigSource func() map[string]string
	Version      string
	APIKey       string // when set, /v1/* needs "Authorization: Bearer <APIKey>"
	// CORSOrigins are the web origins browsers may call the API from
	// ("https://app.example.com", or "*" for any); none by default.
	CORSOrigins []string
	// ListenHost is the host the server listens on (--host; "" is
	// loopback): it decides which Host headers requests may carry
	// (hostcheck.go), so that a DNS-rebound web page is refused.
	ListenHost string
	// AllowedHosts are more host names requests may be addressed to (a
	// reverse proxy's public name); "*" accepts any Host.
	AllowedHosts  []string
	MaxConcurrent int   // runs at once
	MaxQueue      int   // requests waiting for a run slot, FIFO
	MaxBodyBytes  int64 // request body limit; larger bodies get 413
	// BodyTimeout bounds the reading of a request body: a client that
	// stalls mid-body gets 408 rather than holding its handler (and
	// Shutdown) for as long as it keeps the connection open.
	BodyTimeout time.Duration
	// WriteTimeout bounds each write to a client (one SSE chunk, or a
	// whole response): a client that stops reading is dropped and its run
	// cancelled.
	WriteTimeout time.Duration
	// StopWait is how long Shutdown waits for runs to end once it has
	// cancelled them at the end of its grace period.
	StopWait time.Duration
	KeepRuns int // finished runs GET /v1/runs/{id} remembers
	// KeepResponses and KeepBytes bound the Responses kept in memory for
	// previous_response_id and item_reference: the least recently used go
	// first when either is exceeded.
	KeepResponses int
	KeepBytes     int64
	// Responses, when set, is the database where Responses are kept too
	// (the memory above is then its cache), so that they outlive the
	// process; StoredResponses, StoredBytes and StoredAge bound them
	// there, the oldest going first.
	Responses       *store.Store
	StoredResponses int
	StoredBytes     int64
	StoredAge       time.Duration
	Logger          *slog.Logger
	Now             func() time.Time
	// UI, when set, is the Web UI, served at /ui/ behind the same Host
	// check (it checks the API key itself: a browser cannot send it on a
	// page load, so its page is public and its data needs the key).
	UI http.Handler
}

// Server is the OpenAI-compatible HTTP API. Create it with New, serve
// Handler with an http.Server, and call Shutdown before shutting that
// http.Server down.
type Server struct {
	d       Deps
	log     *slog.Logger
	adm     *admission
	hosts   hostPolicy
	runs    *registry
	kept    *responseStore
	bg      backgrounds // background responses in flight (background.go)
	handler http.Handler
	created int64

	// stop cancels every run: the end of Shutdown's grace period.
	stopCtx context.Context
	stop    context.CancelCauseFunc

	mu       sync.Mutex
	closing  bool
	active   int // chat completion requests in the handler
	idle     chan struct{}
	idleOnce sync.Once
}

var errStopped = errors.New("the server is shutting down")

// New returns a server; d.Run is required.
func New(d Deps) *Server {
	if d.Run == nil {
		panic("server: Deps.Run is required")
	}
	d.MaxConcurrent = cmp.Or(max(d.MaxConcurrent, 0), DefaultMaxConcurrent)
	d.MaxQueue = max(d.MaxQueue, 0)
	d.MaxBodyBytes = cmp.Or(max(d.MaxBodyBytes, 0), DefaultMaxBodyBytes)
	d.WriteTimeout = cmp.Or(max(d.WriteTimeout, 0), DefaultWriteTimeout)
	d.BodyTimeout = cmp.Or(max(d.BodyTimeout, 0), DefaultBodyTimeout)
	d.StopWait = cmp.Or(max(d.StopWait, 0), DefaultStopWait)
	d.KeepRuns = cmp.Or(max(d.KeepRuns, 0), DefaultKeepRuns)
	d.KeepResponses = cmp.Or(max(d.KeepResponses, 0), DefaultKeepResponses)
	d.KeepBytes = cmp.Or(max(d.KeepBytes, 0), DefaultKeepBytes)
	d.StoredResponses = cmp.Or(max(d.StoredResponses, 0), DefaultStoredResponses)
	d.StoredBytes = cmp.Or(max(d.StoredBytes, 0), DefaultStoredBytes)
	d.StoredAge = cmp.Or(max(d.StoredAge, 0), DefaultStoredAge)
	d.Version = cmp.Or(d.Version, "dev")
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.ConfigSource == nil {
		configs := d.Configs
		d.ConfigSource = func() map[string]string { return configs }
	}
	s := &Server{d: d, log: d.Logger, adm: newAdmission(d.MaxConcurrent, d.MaxQueue),
		hosts: newHostPolicy(d.ListenHost, d.AllowedHosts),
		runs:  newRegistry(d.KeepRuns), created: d.Now().Unix(), idle: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.kept = newResponseStore(d.KeepResponses, d.KeepBytes, d.Responses,
		store.ResponseLimits{Max: d.StoredResponses, MaxBytes: d.StoredBytes, MaxAge: d.StoredAge}, s.log)
	s.stopCtx, s.stop = context.WithCancelCause(context.Background())

	mux := http.NewServeMux()
	mux.HandleFunc("/health", s.health)
	mux.HandleFunc("/v1/models", s.models)
	mux.HandleFunc("/v1/models/{id...}", s.model)
	mux.HandleFunc("/v1/chat/completions", s.runRoute(decodeChat, func(req *chatRequest) format {
		return chatFormat{includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage, hold: req.format != nil}
	}))
	mux.HandleFunc("/v1/responses", s.runRoute(s.decodeResponses, func(req *chatRequest) format {
		return responsesFormat{in: req.resp, keep: s.kept, hold: req.format != nil}
	}))
	mux.HandleFunc("/v1/responses/{id}", s.keptResponse)
	mux.HandleFunc("/v1/responses/{id}/input_items", s.handleInputItems)
	mux.HandleFunc("/v1/responses/{id}/cancel", s.cancelResponse)
	mux.HandleFunc("/v1/runs/{id}", s.run)
	mux.HandleFunc("/v1/runs/{id}/events", s.runEvents)
	if d.UI != nil {
		mux.Handle("/ui/", d.UI)
		mux.Handle("/ui", d.UI)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, NewError(http.StatusNotFound, "unknown_url", "Unknown route: %s %s", r.Method, r.URL.Path))
	})
	s.handler = s.middleware(mux)
	return s
}

// Handler returns the HTTP handler with every route.
func (s *Server) Handler() http.Handler { return s.handler }
