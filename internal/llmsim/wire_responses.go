package llmsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// responsesWire is the OpenAI Responses API: POST /v1/responses. Its errors
// are OpenAI's, as for Chat Completions.
var responsesWire = &wireFormat{name: WireResponses, decode: decodeResponses, fail: failOpenAI}

// responsesRequest is the part of a Responses request the simulator reads.
type responsesRequest struct {
	Model        string          `json:"model"`
	Instructions *anyText        `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Stream       bool            `json:"stream"`
	Tools        json.RawMessage `json:"tools"`
}

type responsesTool struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
	// Tools are a namespace's (type "namespace": a group of functions, such
	// as the tools of one MCP server; their calls name the namespace).
	Tools []responsesTool `json:"tools"`
}

// namespaced is the name a namespace's function is offered and recorded
// under: Codex's namespace for an MCP server ("mcp__massgen") and the
// tool's name joined as Codex names MCP tools ("mcp__massgen__new_answer"),
// so the workflow tools are recognised under it.
func namespaced(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "__" + name
}

// responsesItem is an input item: a message (type "message" or none), a
// function_call or a function_call_output. Other items are skipped.
type responsesItem struct {
	Type      string  `json:"type"`
	Role      string  `json:"role"`
	Content   anyText `json:"content"`
	CallID    string  `json:"call_id"`
	Name      string  `json:"name"`
	Arguments string  `json:"arguments"`
	Output    anyText `json:"output"`
	Namespace string  `json:"namespace"`
}

func decodeResponses(_ *http.Request, body []byte) (*request, encoder, error) {
	rr := new(responsesRequest)
	if err := json.Unmarshal(body, rr); err != nil {
		return nil, nil, fmt.Errorf("we could not parse the JSON body of your request: %v", err)
	}
	if rr.Model == "" {
		return nil, nil, errors.New("Missing required parameter: 'model'.")
	}
	req := &request{model: rr.Model, stream: rr.Stream}
	var tools []responsesTool
	if len(rr.Tools) > 0 && !bytes.Equal(rr.Tools, []byte("null")) {
		if err := json.Unmarshal(rr.Tools, &tools); err != nil {
			return nil, nil, fmt.Errorf("Invalid type for 'tools': %v", err)
		}
	}
	req.nTools = len(tools)
	enc := &responsesEncoder{tools: json.RawMessage("[]")}
	for i, t := range tools {
		switch t.Type {
		case "function":
			if t.Name == "" {
				return nil, nil, fmt.Errorf("Missing required parameter: 'tools[%d].name'.", i)
			}
			req.addTool(t.Name, t.Parameters)
		case "namespace":
			if t.Name == "" {
				return nil, nil, fmt.Errorf("Missing required parameter: 'tools[%d].name'.", i)
			}
			for j, f := range t.Tools {
				if f.Type != "function" {
					continue // a namespace's custom tools take free text: nothing to script
				}
				if f.Name == "" {
					return nil, nil, fmt.Errorf("Missing required parameter: 'tools[%d].tools[%d].name'.", i, j)
				}
				full := namespaced(t.Name, f.Name)
				req.addTool(full, f.Parameters)
				if enc.namespaces == nil {
					enc.namespaces = map[string][2]string{}
				}
				enc.namespaces[full] = [2]string{t.Name, f.Name}
			}
		default:
			// hosted tools (web_search, file_search, ...) and custom
			// (free-text) tools have no function to call
		}
	}

	var c conversation
	if len(tools) > 0 {
		enc.tools = rr.Tools
	}
	if rr.Instructions != nil {
		s := string(*rr.Instructions)
		enc.instructions = &s
		c.add(Message{Role: "system", Content: s})
	}
	in := bytes.TrimSpace(rr.Input)
	switch {
	case len(in) == 0 || bytes.Equal(in, []byte("null")):
	case in[0] == '"':
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, nil, fmt.Errorf("Invalid 'input': %v", err)
		}
		c.add(Message{Role: "user", Content: s})
	case in[0] == '[':
		var items []responsesItem
		if err := json.Unmarshal(in, &items); err != nil {
			return nil, nil, fmt.Errorf("Invalid 'input': %v", err)
		}
		for _, it := range items {
			switch it.Type {
			case "", "message":
				c.add(Message{Role: it.Role, Content: string(it.Content)})
			case "function_call":
				c.call(it.CallID, namespaced(it.Namespace, it.Name), len(it.Arguments))
			case "function_call_output":
				c.result(it.CallID, "", string(it.Output))
			}
		}
	default:
		return nil, nil, errors.New("Invalid type for 'input': expected a string or an array of input items.")
	}
	req.messages, req.prompt, req.results = c.msgs, c.promptTokens(), c.results
	return req, enc, nil
}

// responsesEncoder renders a plan as a Response: streamed as the event
// sequence of the recordings in reference/provider-recordings/
// TestOpenAIResponsesCommon (response.created, response.in_progress; for the
// text a message item with one output_text part and its deltas; per tool
// call a function_call item with argument deltas; response.completed with
// usage), or whole.
type responsesEncoder struct {
	instructions *string
	tools        json.RawMessage // the request's tools, echoed as the API does
	created      int64
	seq          int    // sequence_number of the next event
	buf          []byte // reused fields buffer
	msgID, fcID  string // IDs of the message item and of the current call's item
	// namespaces maps the name a namespace's function is recorded under
	// to its namespace and its own name, which its calls carry.
	namespaces map[string][2]string
}

func (e *responsesEncoder) headers(x *exchange, h http.Header, stream bool) {
	if stream {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
	} else {
		h.Set("Content-Type", "application/json")
	}
	h.Set("X-Request-Id", "req_sim"+strconv.Itoa(x.id))
}

// event appends an SSE event: fields are the JSON members after "type" and
// before "sequence_number", without braces.
func (e *responsesEncoder) event(b []byte, typ string, fields []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	b = append(b, "\","...)
	b = append(b, fields...)
	b = append(b, `,"sequence_number":`...)
	b = strconv.AppendInt(b, int64(e.seq), 10)
	e.seq++
	return append(b, "}\n\n"...)
}

// members marshals v, a struct, to its members without the braces.
func members(v any) []byte {
	b := mustMarshal(v)
	return b[1 : len(b)-1]
}

func (e *responsesEncoder) open(x *exchange, b []byte) []byte {
	e.created = time.Now().Unix()
	e.buf = make([]byte, 0, 256)
	e.msgID = messageID(x.id)
	f := members(struct {
		Response responseObject `json:"response"`
	}{e.response(x, "in_progress", []any{}, nil)})
	b = e.event(b, "response.created", f)
	return e.event(b, "response.in_progress", f)
}

func (e *responsesEncoder) textStart(x *exchange, b []byte) []byte {
	b = e.event(b, "response.output_item.added", members(itemEvent{e.message(x, "in_progress", nil), 0}))
	return e.event(b, "response.content_part.added", members(partEvent{0, messageID(x.id), 0, outputText{Text: ""}.init()}))
}

func (e *responsesEncoder) textEnd(x *exchange, b []byte) []byte {
	text := x.p.text
	b = e.event(b, "response.output_text.done", members(struct {
		ContentIndex int      `json:"content_index"`
		ItemID       string   `json:"item_id"`
		Logprobs     []string `json:"logprobs"`
		OutputIndex  int      `json:"output_index"`
		Text         string   `json:"text"`
	}{0, messageID(x.id), []string{}, 0, text}))
	b = e.event(b, "response.content_part.done", members(partEvent{0, messageID(x.id), 0, outputText{Text: text}.init()}))
	return e.event(b, "response.output_item.done", members(itemEvent{e.message(x, "completed", &text), 0}))
}

func (e *responsesEncoder) delta(x *exchange, b []byte, call int, frag string, _ bool) []byte {
	e.buf = e.buf[:0]
	if call < 0 {
		e.buf = append(e.buf, `"content_index":0,"delta":"`...)
		e.buf = appendEscaped(e.buf, frag)
		e.buf = append(e.buf, `","item_id":"`...)
		e.buf = append(e.buf, e.msgID...)
		e.buf = append(e.buf, `","logprobs":[],"output_index":0`...)
		return e.event(b, "response.output_text.delta", e.buf)
	}
	e.buf = append(e.buf, `"delta":"`...)
	e.buf = appendEscaped(e.buf, frag)
	e.buf = append(e.buf, `","item_id":"`...)
	e.buf = append(e.buf, e.fcID...)
	e.buf = append(e.buf, `","output_index":`...)
	e.buf = strconv.AppendInt(e.buf, int64(itemIndex(x, call)), 10)
	return e.event(b, "response.function_call_arguments.delta", e.buf)
}

func (e *responsesEncoder) callStart(x *exchange, b []byte, i int) []byte {
	e.fcID = functionCallID(x.id, i)
	return e.event(b, "response.output_item.added", members(itemEvent{e.callItem(x, i, "in_progress", ""), itemIndex(x, i)}))
}

func (e *responsesEncoder) callEnd(x *exchange, b []byte, i int) []byte {
	args := x.p.calls[i].args
	b = e.event(b, "response.function_call_arguments.done", members(struct {
		Arguments   string `json:"arguments"`
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
	}{args, functionCallID(x.id, i), itemIndex(x, i)}))
	return e.event(b, "response.output_item.done", members(itemEvent{e.callItem(x, i, "completed", args), itemIndex(x, i)}))
}

func (e *responsesEncoder) close(x *exchange, b []byte) []byte {
	u := newResponsesUsage(x.req.prompt, x.tokens)
	return e.event(b, "response.completed", members(struct {
		Response responseObject `json:"response"`
	}{e.response(x, "completed", e.output(x), &u)}))
}

func (e *responsesEncoder) body(x *exchange, total int) []byte {
	e.created = time.Now().Unix()
	u := newResponsesUsage(x.req.prompt, total)
	b, _ := json.Marshal(e.response(x, "completed", e.output(x), &u))
	return b
}

// output is the items of the whole response: the message (if there is
// text), then the function calls.
func (e *responsesEncoder) output(x *exchange) []any {
	out := make([]any, 0, 1+len(x.p.calls))
	if x.p.text != "" {
		out = append(out, e.message(x, "completed", &x.p.text))
	}
	for i, c := range x.p.calls {
		out = append(out, e.callItem(x, i, "completed", c.args))
	}
	return out
}

func (e *responsesEncoder) message(x *exchange, status string, text *string) messageItem {
	m := messageItem{ID: messageID(x.id), Type: "message", Status: status, Content: []outputText{}, Role: "assistant"}
	if text != nil {
		m.Content = append(m.Content, outputText{Text: *text}.init())
	}
	return m
}

func (e *responsesEncoder) callItem(x *exchange, i int, status, args string) functionCallItem {
	it := functionCallItem{ID: functionCallID(x.id, i), Type: "function_call", Status: status,
		Arguments: args, CallID: callID(x.id, i), Name: x.p.calls[i].name}
	if ns, ok := e.namespaces[it.Name]; ok {
		it.Namespace, it.Name = ns[0], ns[1]
	}
	return it
}

func (e *responsesEncoder) response(x *exchange, status string, output []any, u *responsesUsage) responseObject {
	r := responseObject{
		ID: responseID(x.id), Object: "response", CreatedAt: e.created, Status: status,
		Instructions: e.instructions, Model: x.req.model, Output: output, ParallelToolCalls: true,
		PromptCacheRetention: "in_memory", ServiceTier: "default", Store: true, Temperature: 1, ToolChoice: "auto", Tools: e.tools,
		TopP: 1, Truncation: "disabled", Usage: u, Metadata: struct{}{},
	}
	r.Text.Format.Type, r.Text.Verbosity = "text", "medium"
	if status == "completed" {
		now := time.Now().Unix()
		r.CompletedAt = &now
	}
	return r
}

// responseObject is a Response, with the members in the API's order.
type responseObject struct {
	ID                   string    `json:"id"`
	Object               string    `json:"object"`
	CreatedAt            int64     `json:"created_at"`
	Status               string    `json:"status"`
	Background           bool      `json:"background"`
	CompletedAt          *int64    `json:"completed_at"`
	Error                *struct{} `json:"error"`
	FrequencyPenalty     float64   `json:"frequency_penalty"`
	IncompleteDetails    *struct{} `json:"incomplete_details"`
	Instructions         *string   `json:"instructions"`
	MaxOutputTokens      *int      `json:"max_output_tokens"`
	MaxToolCalls         *int      `json:"max_tool_calls"`
	Model                string    `json:"model"`
	Moderation           *struct{} `json:"moderation"`
	Output               []any     `json:"output"`
	ParallelToolCalls    bool      `json:"parallel_tool_calls"`
	PresencePenalty      float64   `json:"presence_penalty"`
	PreviousResponseID   *string   `json:"previous_response_id"`
	PromptCacheKey       *string   `json:"prompt_cache_key"`
	PromptCacheRetention string    `json:"prompt_cache_retention"`
	Reasoning            struct {
		Context *string `json:"context"`
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	} `json:"reasoning"`
	SafetyIdentifier *string `json:"safety_identifier"`
	ServiceTier      string  `json:"service_tier"`
	Store            bool    `json:"store"`
	Temperature      float64 `json:"temperature"`
	Text             struct {
		Format struct {
			Type string `json:"type"`
		} `json:"format"`
		Verbosity string `json:"verbosity"`
	} `json:"text"`
	ToolChoice  string          `json:"tool_choice"`
	Tools       json.RawMessage `json:"tools"`
	TopLogprobs int             `json:"top_logprobs"`
	TopP        float64         `json:"top_p"`
	Truncation  string          `json:"truncation"`
	Usage       *responsesUsage `json:"usage"`
	User        *string         `json:"user"`
	Metadata    struct{}        `json:"metadata"`
}

type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

func newResponsesUsage(in, out int) responsesUsage {
	return responsesUsage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

type messageItem struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"`
	Status  string       `json:"status"`
	Content []outputText `json:"content"`
	Role    string       `json:"role"`
}

type outputText struct {
	Type        string   `json:"type"`
	Annotations []string `json:"annotations"`
	Logprobs    []string `json:"logprobs"`
	Text        string   `json:"text"`
}

func (t outputText) init() outputText {
	t.Type, t.Annotations, t.Logprobs = "output_text", []string{}, []string{}
	return t
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type itemEvent struct {
	Item        any `json:"item"`
	OutputIndex int `json:"output_index"`
}

type partEvent struct {
	ContentIndex int        `json:"content_index"`
	ItemID       string     `json:"item_id"`
	OutputIndex  int        `json:"output_index"`
	Part         outputText `json:"part"`
}

// IDs derived from the request's log ID, like the Chat Completions ones
// (the function calls' call_id is callID).
func responseID(id int) string            { return fmt.Sprintf("resp_sim%06d", id) }
func messageID(id int) string             { return fmt.Sprintf("msg_sim%06d", id) }
func functionCallID(id, index int) string { return fmt.Sprintf("fc_sim%06d_%d", id, index) }
