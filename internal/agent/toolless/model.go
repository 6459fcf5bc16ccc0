package toolless

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// Options configure Wrap.
type Options struct {
	Mode Mode
	// BaseURL is the server's OpenAI-compatible base (…/v1), where auto
	// looks for llama.cpp's /props.
	BaseURL string
	Model   string // the model's name, for a server that serves several
	// Client is used for that look (http.DefaultClient when nil).
	Client *http.Client
}

// Wrap puts m behind the seam: it returns m itself for Native (and an
// empty mode), else a Model that asks for the workflow actions as Mode
// says. Each wrapped model keeps what auto found out about its server.
func Wrap(m llm.Model, o Options) llm.Model {
	if o.Mode == Native || o.Mode == "" {
		return m
	}
	w := &Model{inner: m, opts: o}
	if o.Mode != Auto {
		w.mode.Store(&o.Mode)
	}
	return w
}

// Model is a model behind the seam (see the package doc).
type Model struct {
	inner llm.Model
	opts  Options
	// mode is the resolved mode: native, json_schema or text; nil while
	// auto has not looked at the server yet.
	mode  atomic.Pointer[Mode]
	probe sync.Once
	calls atomic.Int64 // numbers the calls this seam makes up
	// prose counts auto's native coordination replies in a row that were
	// text without a single tool call.
	prose atomic.Int64
}

// proseLimit is how many native coordination replies in a row may be
// prose before auto takes the server for one that drops tools (a llama.cpp
// without /props): one is a model that forgot, as tool-calling models
// sometimes do; two, and the turn's last attempt goes through the schema.
const proseLimit = 2

// Mode is the mode the model is in now: auto's finding once it has one.
func (w *Model) Mode() Mode {
	if m := w.mode.Load(); m != nil {
		return *m
	}
	return Auto
}

func (w *Model) set(m Mode) { w.mode.Store(&m) }

// resolve settles auto's mode before the first coordination request.
func (w *Model) resolve(ctx context.Context) Mode {
	w.probe.Do(func() {
		if w.mode.Load() != nil {
			return
		}
		if probeNoTools(ctx, cmp.Or(w.opts.Client, http.DefaultClient), w.opts.BaseURL, w.opts.Model) {
			w.set(JSONSchema)
		} else {
			w.set(Native)
		}
	})
	return w.Mode()
}

// Stream sends req, asking for a workflow action the resolved mode's way
// when req offers the workflow tools.
func (w *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		o, coordination := offerOf(req.Tools)
		if !coordination {
			w.passThrough(ctx, req, yield)
			return
		}
		mode := w.resolve(ctx)
		if mode == Native {
			sent, called, text := false, false, false
			for c, err := range w.inner.Stream(ctx, req) {
				if err != nil && !sent && w.opts.Mode == Auto && refusesTools(err) {
					// The server will not take tools: from now on, and for
					// this request, the schema.
					w.set(JSONSchema)
					mode = JSONSchema
					break
				}
				sent = true
				called = called || c.Kind == llm.ChunkToolCall
				text = text || c.Kind == llm.ChunkText && strings.TrimSpace(c.Text) != ""
				if c.Kind == llm.ChunkDone && w.opts.Mode == Auto {
					w.countProse(called, text)
				}
				if !yield(c, err) || err != nil {
					return
				}
			}
			if mode == Native {
				return
			}
		}
		w.fallback(ctx, req, o, mode, yield)
	}
}

// countProse keeps auto's count of prose replies in a row, and switches to
// the schema at proseLimit.
func (w *Model) countProse(called, text bool) {
	if called || !text {
		w.prose.Store(0)
		return
	}
	if w.prose.Add(1) >= proseLimit {
		w.set(JSONSchema)
	}
}

// passThrough sends a request without the workflow tools as it is, except
// that in a fallback mode a post-evaluation loses its submit/restart
// tools: the model could not call them, and a server that refuses tools
// would fail the request; a text reply counts as submit.
func (w *Model) passThrough(ctx context.Context, req *llm.Request, yield func(llm.Chunk, error) bool) {
	if m := w.mode.Load(); m != nil && *m != Native && len(req.Tools) > 0 && onlyEvaluation(req.Tools) {
		r := *req
		r.Tools = nil
		req = &r
	}
	for c, err := range w.inner.Stream(ctx, req) {
		if !yield(c, err) || err != nil {
			return
		}
	}
}

func onlyEvaluation(tools []llm.ToolDef) bool {
	for _, t := range tools {
		if t.Name != coord.ToolSubmit && t.Name != coord.ToolRestart {
			return false
		}
	}
	return true
}

// refusesTools reports a provider error that refuses a request for
// carrying tools (vLLM without --enable-auto-tool-choice, an Ollama model
// without tool support, a llama.cpp started without --jinja).
func refusesTools(err error) bool { return refuses(err, "tool") }

// refuses reports an HTTP 400 whose message names one of words: the
// server refusing a part of the request.
func refuses(err error, words ...string) bool {
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(e.Message + " " + fmt.Sprint(e.Err))
	for _, w := range words {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// fallback sends req without tools, the action asked for in the system
// prompt (and in response_format for JSONSchema), and turns the reply into
// the workflow call the turn expects. Text, reasoning and usage are passed
// on; the reply text is not streamed as text when it held the action.
func (w *Model) fallback(ctx context.Context, req *llm.Request, o offer, mode Mode, yield func(llm.Chunk, error) bool) {
	r := rewrite(req, o, mode)
	var text strings.Builder
	var done *llm.Chunk
	sent := false
	for c, err := range w.inner.Stream(ctx, r) {
		if err != nil {
			if !sent && mode == JSONSchema && w.opts.Mode == Auto && refuses(err, "response_format", "schema", "grammar") {
				// Neither tools nor schemas: the lines of text, from now on.
				w.set(Text)
				w.fallback(ctx, req, o, Text, yield)
				return
			}
			yield(llm.Chunk{}, err)
			return
		}
		sent = true
		switch c.Kind {
		case llm.ChunkText:
			text.WriteString(c.Text)
		case llm.ChunkDone:
			d := c
			done = &d
		case llm.ChunkToolCall, llm.ChunkToolArgs:
			// A call of a tool the request no longer offers: not ours to pass on.
		default:
			if !yield(c, nil) {
				return
			}
		}
	}
	if done == nil {
		if err := ctx.Err(); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		done = &llm.Chunk{Kind: llm.ChunkDone, FinishReason: "stop"} // a server that ended without saying so
	}
	name, args, ok := parse(text.String(), o)
	if !ok {
		// No action in it: the turn hears the text and asks again.
		if text.Len() > 0 && !yield(llm.Chunk{Kind: llm.ChunkText, Text: text.String()}, nil) {
			return
		}
		yield(*done, nil)
		return
	}
	b, _ := json.Marshal(args)
	call := &llm.ToolCall{ID: fmt.Sprintf("toolless_%d", w.calls.Add(1)), Name: name, Arguments: string(b)}
	if !yield(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: call}, nil) {
		return
	}
	yield(llm.Chunk{Kind: llm.ChunkDone, FinishReason: "tool_calls"}, nil)
}

// rewrite is the request a model without tools can answer: no tools; the
// system prompt says how to reply; the turn's earlier actions (calls this
// seam made up) as the text the model would have written, and their
// results as user messages.
func rewrite(req *llm.Request, o offer, mode Mode) *llm.Request {
	r := *req
	r.Tools = nil
	r.Messages = make([]llm.Message, 0, len(req.Messages)+1)
	instr := o.instructions(mode)
	system := false
	for _, m := range req.Messages {
		switch {
		case m.Role == llm.RoleSystem && !system:
			m.Content += instr
			system = true
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			parts := []string{}
			if strings.TrimSpace(m.Content) != "" && mode == Text {
				parts = append(parts, m.Content)
			}
			for _, c := range m.ToolCalls {
				parts = append(parts, render(mode, c))
			}
			m = llm.Message{Role: llm.RoleAssistant, Content: strings.Join(parts, "\n")}
		case m.Role == llm.RoleTool:
			m = llm.Message{Role: llm.RoleUser, Content: m.Content}
		case m.Role == llm.RoleUser && (m.Content == coord.EnforcementMessage || m.Content == coord.StopEnforcementMessage):
			m.Content = "You did not reply with an action." + instr
		}
		r.Messages = append(r.Messages, m)
	}
	if !system {
		r.Messages = append([]llm.Message{{Role: llm.RoleSystem, Content: strings.TrimSpace(instr)}}, r.Messages...)
	}
	if mode == JSONSchema {
		r.Params = maps.Clone(req.Params)
		if r.Params == nil {
			r.Params = map[string]any{}
		}
		r.Params["response_format"] = o.schema()
	}
	return &r
}
