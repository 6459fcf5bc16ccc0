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

// chatWire is OpenAI Chat Completions: POST /v1/chat/completions.
var chatWire = &wireFormat{name: WireChat, decode: decodeChat, fail: failOpenAI}

// chatRequest is the part of a Chat Completions request the simulator reads.
// Unknown fields (temperature, max_tokens, tool_choice, ...) are accepted and
// ignored, as a lenient compatible server would.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []chatTool `json:"tools"`
	Seed  *int64     `json:"seed"`
	// ResponseFormat json_schema asks for JSON output: the reply is an
	// instance of the schema (see schemaInstance), as a server that
	// constrains output with a grammar (llama.cpp, vLLM) gives.
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type chatMessage struct {
	Role       string      `json:"role"`
	Content    textContent `json:"content"`
	ToolCallID string      `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// textContent accepts the three shapes a message content takes on the wire:
// a string, null, or an array of parts of which the text parts are kept.
type textContent string

func (c *textContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*c = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		*c = textContent(s)
		return err
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var s []byte
		for _, p := range parts {
			if p.Type == "text" {
				s = append(s, p.Text...)
			}
		}
		*c = textContent(s)
		return nil
	}
	return errors.New("content must be a string, an array of content parts or null")
}

// decodeChat parses and checks a Chat Completions request body.
func decodeChat(_ *http.Request, body []byte) (*request, encoder, error) {
	cr := new(chatRequest)
	if err := json.Unmarshal(body, cr); err != nil {
		return nil, nil, fmt.Errorf("we could not parse the JSON body of your request: %v", err)
	}
	if cr.Model == "" {
		return nil, nil, errors.New("you must provide a model parameter")
	}
	if len(cr.Messages) == 0 {
		return nil, nil, errors.New("'messages' must contain at least one message")
	}
	req := &request{model: cr.Model, stream: cr.Stream, nTools: len(cr.Tools)}
	for i, t := range cr.Tools {
		if t.Type != "" && t.Type != "function" {
			continue // custom tools have no function name; nothing to offer
		}
		if t.Function.Name == "" {
			return nil, nil, fmt.Errorf("missing required parameter: 'tools[%d].function.name'", i)
		}
		req.addTool(t.Function.Name, t.Function.Parameters)
	}
	req.messages, req.prompt, req.results = cr.recordMessages(), cr.promptTokens(), cr.results()
	if cr.Seed != nil {
		req.seed = *cr.Seed
	}
	enc := &chatEncoder{includeUsage: cr.includeUsage()}
	if rf := cr.ResponseFormat; rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil && len(rf.JSONSchema.Schema) > 0 {
		enc.schema, req.jsonSchema = rf.JSONSchema.Schema, true
	}
	return req, enc, nil
}

func (r *chatRequest) modelName() string { return r.Model }

// lastUser is the latest user message that carries the task; see userTask.
func (r *chatRequest) lastUser() string {
	return userTask(len(r.Messages), func(i int) (string, string) { return r.Messages[i].Role, string(r.Messages[i].Content) })
}

func (r *chatRequest) includeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// promptTokens estimates the prompt size as providers bill it, roughly: a
// token per four characters of message text and tool-call arguments.
func (r *chatRequest) promptTokens() int {
	n := 0
	for _, m := range r.Messages {
		n += len(m.Content)
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Arguments)
		}
	}
	return max(n/4, 1)
}

// results are the tool messages after the last assistant message, named
// after the calls they answer.
func (r *chatRequest) results() []toolResult {
	names := map[string]string{}
	var out []toolResult
	for _, m := range r.Messages {
		switch m.Role {
		case "assistant":
			out = nil
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Function.Name
			}
		case "tool":
			out = append(out, toolResult{name: names[m.ToolCallID], content: string(m.Content)})
		}
	}
	return out
}

// recordMessages copies the conversation into the request log's form.
func (r *chatRequest) recordMessages() []Message {
	out := make([]Message, len(r.Messages))
	for i, m := range r.Messages {
		out[i] = Message{Role: m.Role, Content: string(m.Content), ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, tc.Function.Name)
		}
	}
	return out
}

// chatEncoder streams chat.completion.chunk events shaped like OpenAI's (see
// the recordings in reference/provider-recordings/TestOpenAICommon): a role
// chunk, content fragments, then per tool call a header chunk (index, id,
// type, name, empty arguments) and argument fragments, a finish_reason
// chunk, a usage chunk with empty choices when stream_options.include_usage
// is set, and data: [DONE]. Deltas are appended by hand: a token costs no
// allocation.
type chatEncoder struct {
	includeUsage bool
	head         []byte          // `data: {"id":...,"system_fingerprint":"fp_llmsim",` of every chunk
	buf          []byte          // reused delta buffer
	schema       json.RawMessage // response_format's JSON schema, if any
}

func (e *chatEncoder) headers(x *exchange, h http.Header, stream bool) {
	if e.schema != nil && len(x.p.calls) == 0 && x.p.status == 0 && !json.Valid([]byte(x.p.text)) {
		x.p.text = string(mustMarshal(schemaInstance(e.schema, x.req.model)))
	}
	if stream {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
	} else {
		h.Set("Content-Type", "application/json")
	}
	h.Set("X-Request-Id", "req_sim"+strconv.Itoa(x.id))
}

func (e *chatEncoder) open(x *exchange, b []byte) []byte {
	e.head = appendHead(make([]byte, 0, 160), x.id, x.req.model)
	e.buf = make([]byte, 0, 256)
	role := `{"role":"assistant","content":"","refusal":null}`
	if x.p.text == "" && len(x.p.calls) > 0 {
		role = `{"role":"assistant","content":null}` // what OpenAI sends before tool calls
	}
	return wrap(b, e.head, role, "null")
}

func (e *chatEncoder) textStart(_ *exchange, b []byte) []byte { return b }
func (e *chatEncoder) textEnd(_ *exchange, b []byte) []byte   { return b }
func (e *chatEncoder) callEnd(_ *exchange, b []byte, _ int) []byte {
	return b
}

func (e *chatEncoder) delta(_ *exchange, b []byte, call int, frag string, _ bool) []byte {
	if call < 0 {
		e.buf = append(e.buf[:0], `{"content":"`...)
		e.buf = appendEscaped(e.buf, frag)
		e.buf = append(e.buf, `"}`...)
	} else {
		e.buf = append(e.buf[:0], `{"tool_calls":[{"index":`...)
		e.buf = strconv.AppendInt(e.buf, int64(call), 10)
		e.buf = append(e.buf, `,"function":{"arguments":"`...)
		e.buf = appendEscaped(e.buf, frag)
		e.buf = append(e.buf, `"}}]}`...)
	}
	return wrap(b, e.head, e.buf, "null")
}

func (e *chatEncoder) callStart(x *exchange, b []byte, i int) []byte {
	e.buf = append(e.buf[:0], `{"tool_calls":[{"index":`...)
	e.buf = strconv.AppendInt(e.buf, int64(i), 10)
	e.buf = append(e.buf, `,"id":"`...)
	e.buf = append(e.buf, callID(x.id, i)...)
	e.buf = append(e.buf, `","type":"function","function":{"name":"`...)
	e.buf = appendEscaped(e.buf, x.p.calls[i].name)
	e.buf = append(e.buf, `","arguments":""}}]}`...)
	return wrap(b, e.head, e.buf, "null")
}

func (e *chatEncoder) close(x *exchange, b []byte) []byte {
	b = wrap(b, e.head, "{}", `"`+x.p.finishReason()+`"`)
	if e.includeUsage {
		u, _ := json.Marshal(newUsage(x.req.prompt, x.tokens))
		b = append(b, e.head...)
		b = append(b, `"choices":[],"usage":`...)
		b = append(b, u...)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

// wrap makes a chunk (an SSE event) of a delta.
func wrap[D string | []byte](b, head []byte, delta D, finish string) []byte {
	b = append(b, head...)
	b = append(b, `"choices":[{"index":0,"delta":`...)
	b = append(b, delta...)
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	b = append(b, finish...)
	return append(b, "}],\"usage\":null}\n\n"...)
}

func appendHead(b []byte, id int, model string) []byte {
	b = append(b, `data: {"id":"`...)
	b = append(b, completionID(id)...)
	b = append(b, `","object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = append(b, `,"model":"`...)
	b = appendEscaped(b, model)
	return append(b, `","service_tier":"default","system_fingerprint":"fp_llmsim",`...)
}

// body is a non-streaming chat.completion.
func (e *chatEncoder) body(x *exchange, total int) []byte {
	msg := completionMessage{Role: "assistant", Annotations: []struct{}{}}
	if x.p.text != "" || len(x.p.calls) == 0 {
		msg.Content = &x.p.text
	}
	for i, c := range x.p.calls {
		tc := wireToolCall{ID: callID(x.id, i), Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.name, c.args
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	body, _ := json.Marshal(completion{
		ID: completionID(x.id), Object: "chat.completion", Created: time.Now().Unix(), Model: x.req.model,
		Choices:     []completionChoice{{Message: msg, FinishReason: x.p.finishReason()}},
		Usage:       newUsage(x.req.prompt, total),
		ServiceTier: "default", SystemFingerprint: "fp_llmsim",
	})
	return body
}

// completion is a non-streaming chat.completion, shaped like OpenAI's.
type completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	Choices           []completionChoice `json:"choices"`
	Usage             usage              `json:"usage"`
	ServiceTier       string             `json:"service_tier"`
	SystemFingerprint string             `json:"system_fingerprint"`
}

type completionChoice struct {
	Index        int               `json:"index"`
	Message      completionMessage `json:"message"`
	Logprobs     *struct{}         `json:"logprobs"`
	FinishReason string            `json:"finish_reason"`
}

type completionMessage struct {
	Role        string         `json:"role"`
	Content     *string        `json:"content"` // null when the reply is only tool calls
	Refusal     *string        `json:"refusal"`
	ToolCalls   []wireToolCall `json:"tool_calls,omitempty"`
	Annotations []struct{}     `json:"annotations"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

func newUsage(prompt, completion int) usage {
	return usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// completionID and callID are deterministic, derived from the request's log
// ID, so tests can name them.
func completionID(id int) string  { return fmt.Sprintf("chatcmpl-sim%06d", id) }
func callID(id, index int) string { return fmt.Sprintf("call_sim%06d_%d", id, index) }

// errorBody is OpenAI's error envelope (Chat Completions and Responses). The
// SDK turns it into *openai.Error with Code, Message, Type and Param filled in.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// providerError returns the message, type and code the real API uses for a
// status, so that error classification in the adapters is tested against
// realistic bodies rather than against whatever the simulator made up.
func providerError(status int, model string) (msg, typ string, code *string) {
	str := func(s string) *string { return &s }
	switch status {
	case http.StatusBadRequest:
		return "Invalid request (simulated).", "invalid_request_error", nil
	case http.StatusUnauthorized:
		return "Incorrect API key provided: sim. You can find your API key at https://platform.openai.com/account/api-keys.",
			"invalid_request_error", str("invalid_api_key")
	case http.StatusForbidden:
		return "You are not allowed to use this model (simulated).", "invalid_request_error", str("unsupported_country_region_territory")
	case http.StatusNotFound:
		return fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model),
			"invalid_request_error", str("model_not_found")
	case http.StatusTooManyRequests:
		return fmt.Sprintf("Rate limit reached for %s in organization org-sim on requests per min (RPM): Limit 3, Used 3, Requested 1 (simulated).", model),
			"requests", str("rate_limit_exceeded")
	case http.StatusInternalServerError:
		return "The server had an error while processing your request. Sorry about that!", "server_error", nil
	case http.StatusServiceUnavailable:
		return "The engine is currently overloaded, please try again later.", "server_error", nil
	}
	if status >= 500 {
		return fmt.Sprintf("Simulated server error %d.", status), "server_error", nil
	}
	return fmt.Sprintf("Simulated client error %d.", status), "invalid_request_error", nil
}

// failOpenAI sends an OpenAI error: the usual message, type and code for
// the status, msg replacing the message when set.
func failOpenAI(w http.ResponseWriter, status int, msg, model string, retryAfter float64, _ int) {
	m, typ, code := providerError(status, model)
	if msg != "" {
		m = msg
	}
	writeError(w, status, m, typ, code, retryAfter)
}

// writeError sends an OpenAI error response. retryAfter > 0 adds both
// retry-after (seconds, fractional allowed: the SDK parses floats) and
// retry-after-ms, as OpenAI does.
func writeError(w http.ResponseWriter, status int, msg, typ string, code *string, retryAfter float64) {
	body, _ := json.Marshal(errorBody{Error: errorDetail{Message: msg, Type: typ, Code: code}})
	setRetryAfter(w.Header(), retryAfter)
	sendBody(w, status, "application/json", body)
}

// setRetryAfter adds retry-after (seconds, fractional allowed) and
// retry-after-ms, which the OpenAI and Anthropic SDKs both read.
func setRetryAfter(h http.Header, retryAfter float64) {
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.FormatFloat(retryAfter, 'f', -1, 64))
		h.Set("Retry-After-Ms", strconv.FormatInt(int64(retryAfter*1000), 10))
	}
}
