package llmsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// anthropicWire is Anthropic Messages: POST /v1/messages.
var anthropicWire = &wireFormat{name: WireAnthropic, decode: decodeAnthropic, fail: failAnthropic}

// anthropicRequest is the part of a Messages request the simulator reads.
type anthropicRequest struct {
	Model     string  `json:"model"`
	MaxTokens *int    `json:"max_tokens"`
	System    anyText `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Stream bool `json:"stream"`
	Tools  []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

// anthropicBlock is a content block of a request message: text, tool_use or
// tool_result (images, documents, thinking, ... are skipped).
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   anyText         `json:"content"`
}

// decodeAnthropic reads a Messages request, checking what the real API
// insists on (model, max_tokens, at least one message, known roles), so an
// adapter that forgets them fails here too.
func decodeAnthropic(_ *http.Request, body []byte) (*request, encoder, error) {
	ar := new(anthropicRequest)
	if err := json.Unmarshal(body, ar); err != nil {
		return nil, nil, fmt.Errorf("invalid request body: %v", err)
	}
	switch {
	case ar.Model == "":
		return nil, nil, errors.New("model: Field required")
	case ar.MaxTokens == nil:
		return nil, nil, errors.New("max_tokens: Field required")
	case *ar.MaxTokens < 1:
		return nil, nil, errors.New("max_tokens: Input should be greater than or equal to 1")
	case len(ar.Messages) == 0:
		return nil, nil, errors.New("messages: at least one message is required")
	}
	req := &request{model: ar.Model, stream: ar.Stream, nTools: len(ar.Tools)}
	for i, t := range ar.Tools {
		if t.Type != "" && t.Type != "custom" {
			continue // server tools (web_search_..., bash_..., ...) run at the provider
		}
		if t.Name == "" {
			return nil, nil, fmt.Errorf("tools.%d.custom.name: Field required", i)
		}
		req.addTool(t.Name, t.InputSchema)
	}
	var c conversation
	if ar.System != "" {
		c.add(Message{Role: "system", Content: string(ar.System)})
	}
	for i, m := range ar.Messages {
		switch m.Role {
		case "user", "assistant", "system": // system: mid-conversation system messages
		default:
			return nil, nil, fmt.Errorf("messages.%d.role: Input should be 'user', 'assistant' or 'system'", i)
		}
		content := bytes.TrimSpace(m.Content)
		if len(content) > 0 && content[0] == '"' {
			var s string
			if err := json.Unmarshal(content, &s); err != nil {
				return nil, nil, fmt.Errorf("messages.%d.content: %v", i, err)
			}
			c.add(Message{Role: m.Role, Content: s})
			continue
		}
		var blocks []anthropicBlock
		if err := json.Unmarshal(content, &blocks); err != nil {
			return nil, nil, fmt.Errorf("messages.%d.content: Input should be a valid string or list of content blocks", i)
		}
		var text []byte
		hasText := false
		for _, b := range blocks {
			switch b.Type {
			case "text":
				t := b.Text
				if m.Role == "user" {
					if t = withoutReminders(t); t == "" && b.Text != "" {
						continue
					}
				}
				text, hasText = append(text, t...), true
			case "tool_result":
				c.result(b.ToolUseID, "", string(b.Content))
			}
		}
		if hasText || m.Role == "assistant" {
			c.add(Message{Role: m.Role, Content: string(text)})
		}
		for _, b := range blocks {
			if b.Type == "tool_use" {
				c.call(b.ID, b.Name, len(b.Input))
			}
		}
	}
	req.messages, req.prompt, req.results = c.msgs, c.promptTokens(), c.results
	return req, &anthropicEncoder{}, nil
}

// Claude Code puts context of its own into the user's messages, as
// <system-reminder> sections (its commit attribution rules, the date, a
// file it saw change): not the user's words, so the task a default answer
// quotes is read without them, as a model would read past them.
const reminderOpen, reminderClose = "<system-reminder>", "</system-reminder>"

// withoutReminders is a user text without its <system-reminder> sections.
func withoutReminders(s string) string {
	if !strings.Contains(s, reminderOpen) {
		return s
	}
	var out strings.Builder
	for {
		i := strings.Index(s, reminderOpen)
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], reminderClose)
		if j < 0 {
			break // unclosed: the user's own text, kept
		}
		out.WriteString(s[:i])
		s = strings.TrimLeft(s[i+j+len(reminderClose):], "\n")
	}
	out.WriteString(s)
	return out.String()
}

// anthropicEncoder renders a plan as a Message: streamed as in the
// recordings in reference/provider-recordings/TestAnthropicCommon
// (message_start with the input tokens, a ping, a text block and a tool_use
// block per call, each opened, filled with text_delta or input_json_delta
// and stopped, then message_delta with stop_reason and the output tokens,
// and message_stop), or whole.
type anthropicEncoder struct {
	buf []byte // reused event buffer
}

func (e *anthropicEncoder) headers(x *exchange, h http.Header, stream bool) {
	if stream {
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
	} else {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Request-Id", anthropicRequestID(x.id))
}

func (e *anthropicEncoder) open(x *exchange, b []byte) []byte {
	e.buf = make([]byte, 0, 256)
	m := e.message(x, []any{}, nil, anthropicUsage{InputTokens: x.req.prompt, OutputTokens: 1, ServiceTier: "standard"})
	b = sseEvent(b, "message_start", mustMarshal(struct {
		Type    string           `json:"type"`
		Message anthropicMessage `json:"message"`
	}{"message_start", m}))
	return sseEvent(b, "ping", []byte(`{"type": "ping"}`))
}

func (e *anthropicEncoder) blockStart(b []byte, index int, block any) []byte {
	return sseEvent(b, "content_block_start", mustMarshal(struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock any    `json:"content_block"`
	}{"content_block_start", index, block}))
}

func (e *anthropicEncoder) blockStop(b []byte, index int) []byte {
	e.buf = append(e.buf[:0], `{"type":"content_block_stop","index":`...)
	e.buf = strconv.AppendInt(e.buf, int64(index), 10)
	return sseEvent(b, "content_block_stop", append(e.buf, '}'))
}

func (e *anthropicEncoder) textStart(_ *exchange, b []byte) []byte {
	return e.blockStart(b, 0, textBlock{Type: "text"})
}

func (e *anthropicEncoder) textEnd(_ *exchange, b []byte) []byte { return e.blockStop(b, 0) }

func (e *anthropicEncoder) delta(x *exchange, b []byte, call int, frag string, _ bool) []byte {
	e.buf = append(e.buf[:0], `{"type":"content_block_delta","index":`...)
	if call < 0 {
		e.buf = append(e.buf, `0,"delta":{"type":"text_delta","text":"`...)
	} else {
		e.buf = strconv.AppendInt(e.buf, int64(itemIndex(x, call)), 10)
		e.buf = append(e.buf, `,"delta":{"type":"input_json_delta","partial_json":"`...)
	}
	e.buf = appendEscaped(e.buf, frag)
	return sseEvent(b, "content_block_delta", append(e.buf, `"}}`...))
}

// callStart opens a tool_use block and, as the real API does, sends an empty
// input_json_delta first.
func (e *anthropicEncoder) callStart(x *exchange, b []byte, i int) []byte {
	b = e.blockStart(b, itemIndex(x, i), toolUseBlock{Type: "tool_use", ID: toolUseID(x.id, i), Name: x.p.calls[i].name,
		Input: json.RawMessage("{}")})
	return e.delta(x, b, i, "", false)
}

func (e *anthropicEncoder) callEnd(x *exchange, b []byte, i int) []byte {
	return e.blockStop(b, itemIndex(x, i))
}

func (e *anthropicEncoder) close(x *exchange, b []byte) []byte {
	var md messageDelta
	md.Type, md.Delta.StopReason = "message_delta", stopReason(x.p)
	md.Usage = anthropicUsage{InputTokens: x.req.prompt, OutputTokens: x.tokens}
	b = sseEvent(b, "message_delta", mustMarshal(md))
	return sseEvent(b, "message_stop", []byte(`{"type":"message_stop"}`))
}

// body is the whole Message. A tool_use input that is not a JSON object
// (malformed_tool_json, or a scripted call's broken arguments) cannot be
// sent as one: it goes out as a JSON string holding the text, which no
// adapter will take for valid arguments.
func (e *anthropicEncoder) body(x *exchange, total int) []byte {
	content := make([]any, 0, 1+len(x.p.calls))
	if x.p.text != "" {
		content = append(content, textBlock{Type: "text", Text: x.p.text})
	}
	for i, c := range x.p.calls {
		input := json.RawMessage(c.args)
		if !isObject(c.args) {
			input = mustMarshal(c.args)
		}
		content = append(content, toolUseBlock{Type: "tool_use", ID: toolUseID(x.id, i), Name: c.name, Input: input})
	}
	sr := stopReason(x.p)
	return mustMarshal(e.message(x, content, &sr, anthropicUsage{InputTokens: x.req.prompt, OutputTokens: total, ServiceTier: "standard"}))
}

func (e *anthropicEncoder) message(x *exchange, content []any, stop *string, u anthropicUsage) anthropicMessage {
	return anthropicMessage{Model: x.req.model, ID: anthropicMessageID(x.id), Type: "message", Role: "assistant",
		Content: content, StopReason: stop, Usage: u}
}

func stopReason(p *plan) string {
	if len(p.calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// anthropicMessage is a Message, with the members in the API's order.
type anthropicMessage struct {
	Model        string         `json:"model"`
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Content      []any          `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        anthropicUsage `json:"usage"`
}

type messageDelta struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage anthropicUsage `json:"usage"`
}

type anthropicUsage struct {
	InputTokens              int    `json:"input_tokens"`
	CacheCreationInputTokens int    `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int    `json:"cache_read_input_tokens"`
	OutputTokens             int    `json:"output_tokens"`
	ServiceTier              string `json:"service_tier,omitempty"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolUseBlock struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

func anthropicMessageID(id int) string { return fmt.Sprintf("msg_sim%06d", id) }
func anthropicRequestID(id int) string { return fmt.Sprintf("req_sim%06d", id) }
func toolUseID(id, index int) string   { return fmt.Sprintf("toolu_sim%06d_%d", id, index) }

// anthropicErrorType returns the error type and usual message of the real
// API for a status.
func anthropicErrorType(status int, model string) (typ, msg string) {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error", "Invalid request (simulated)."
	case http.StatusUnauthorized:
		return "authentication_error", "invalid x-api-key"
	case http.StatusPaymentRequired:
		return "billing_error", "Your credit balance is too low to access the Anthropic API (simulated)."
	case http.StatusForbidden:
		return "permission_error", "Your API key does not have permission to use the specified resource."
	case http.StatusNotFound:
		return "not_found_error", "model: " + model
	case http.StatusRequestEntityTooLarge:
		return "request_too_large", "Request exceeds the maximum allowed number of bytes."
	case http.StatusTooManyRequests:
		return "rate_limit_error", "This request would exceed the rate limit for your organization (sim) of 50 requests per minute (simulated)."
	case http.StatusGatewayTimeout:
		return "timeout_error", "Request timed out (simulated)."
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error", "Overloaded"
	}
	if status >= 500 {
		return "api_error", "Internal server error"
	}
	return "invalid_request_error", fmt.Sprintf("Simulated client error %d.", status)
}

// failAnthropic sends an error in Anthropic's shape, with retry-after (and
// retry-after-ms, which the SDK prefers) when set.
func failAnthropic(w http.ResponseWriter, status int, msg, model string, retryAfter float64, id int) {
	typ, usual := anthropicErrorType(status, model)
	if msg == "" {
		msg = usual
	}
	e := struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id,omitempty"`
	}{Type: "error"}
	e.Error.Type, e.Error.Message = typ, msg
	if id > 0 {
		e.RequestID = anthropicRequestID(id)
		w.Header().Set("Request-Id", e.RequestID)
	}
	setRetryAfter(w.Header(), retryAfter)
	sendBody(w, status, "application/json", mustMarshal(e))
}
