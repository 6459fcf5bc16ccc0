package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// The Responses API (POST /v1/responses), for the clients that speak it
// (OpenAI's Agents SDK, newer tools): the request is read into the same
// chatRequest as a chat completion, so that both APIs run alike, and the
// run is written back as a Response (responsesFormat, responsesStream).

// responsesRequest is the part of a Responses request massgen reads, and
// the members it echoes in the Response (as OpenAI does: clients read
// back their tools, instructions, metadata…).
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       json.RawMessage   `json:"instructions"`
	Stream             bool              `json:"stream"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Metadata           json.RawMessage   `json:"metadata"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	Text               json.RawMessage   `json:"text"`
	Truncation         *string           `json:"truncation"`
	Store              *bool             `json:"store"`
	Background         bool              `json:"background"`
	Reasoning          json.RawMessage   `json:"reasoning"`
	User               *string           `json:"user"`
}

// responsesInput is what a Responses request keeps for its Response: the
// request (echoed) and the conversation to store once it has an output.
type responsesInput struct {
	req   *responsesRequest
	conv  []convItem // the conversation, without instructions
	store bool
	// prevLogDir is the log directory of previous_response_id's run.
	prevLogDir string
}

// responsesTool is a tool as the Responses API writes it: a function's
// definition is flat, not nested under "function"; a namespace groups
// tools under a name (the Codex CLI sends its MCP tools so).
type responsesTool struct {
	Type string `json:"type"`
	functionDef
	Tools []responsesTool `json:"tools"`
}

// responsesItem is an input item: a message, a function call the
// assistant made, a function call's output, or a reference to an item of
// a kept response.
type responsesItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// decodeResponses reads a Responses request and turns it into the chat
// request it amounts to: instructions become a system message, the kept
// conversation of previous_response_id comes first, input items become
// messages (function_call items assistant tool calls, function_call_output
// items tool results, item_reference items the kept item's messages).
func (s *Server) decodeResponses(w http.ResponseWriter, r *http.Request, limit int64) (*chatRequest, *Error) {
	var rr responsesRequest
	if e := readJSON(w, r, limit, &rr, "a response"); e != nil {
		return nil, e
	}
	return s.responsesChat(r.Context(), &rr)
}

// responsesChat is decodeResponses once the request is read: also how a
// restarted server reads a background request again (background.go).
func (s *Server) responsesChat(ctx context.Context, rr *responsesRequest) (*chatRequest, *Error) {
	in := &responsesInput{req: rr, store: rr.Store == nil || *rr.Store}
	req := &chatRequest{Model: rr.Model, Stream: rr.Stream, Temperature: rr.Temperature, TopP: rr.TopP, MaxTokens: rr.MaxOutputTokens, resp: in}
	if len(rr.Text) > 0 && string(rr.Text) != "null" {
		var t struct {
			Format json.RawMessage `json:"format"`
		}
		if err := json.Unmarshal(rr.Text, &t); err != nil {
			return nil, badRequest("text", "invalid_value", "'text' must be an object: %v", err)
		}
		f, e := parseFormat(t.Format, "text.format")
		if e != nil {
			return nil, e
		}
		req.format = f
	}
	instr, err := contentText(rr.Instructions)
	if err != nil {
		return nil, badRequest("instructions", "invalid_value", "'instructions' must be a string.")
	}
	if instr != "" {
		b, _ := json.Marshal(instr)
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: b})
	}
	if id := rr.PreviousResponseID; id != nil && *id != "" {
		conv, ok, e := s.kept.response(ctx, *id)
		if e != nil {
			return nil, e
		}
		if !ok {
			return nil, &Error{Status: http.StatusBadRequest, Param: "previous_response_id", Code: "previous_response_not_found",
				Message: fmt.Sprintf("Previous response with id '%s' not found (massgen keeps the latest responses made with store: true: %s).", *id, s.keptWhere())}
		}
		in.conv = append(in.conv, convItem{msgs: conv, prior: true})
		in.prevLogDir = s.kept.logDir(ctx, *id) // kit.go
	}
	items, e := s.inputItems(ctx, rr.Input)
	if e != nil {
		return nil, e
	}
	in.conv = append(in.conv, items...)
	for _, it := range in.conv {
		req.Messages = append(req.Messages, it.msgs...)
	}
	for i, raw := range rr.Tools {
		var t responsesTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, badRequest(fmt.Sprintf("tools[%d]", i), "invalid_tool", "tools[%d] is not a tool: %v", i, err)
		}
		req.Tools = append(req.Tools, flattenTool(t, &req.notes)...)
	}
	return req, nil
}

// flattenTool is a Responses tool as chat tools: a function as it is, a
// namespace's functions, nothing for a hosted tool (web_search,
// file_search, code_interpreter, custom…), which the team cannot run:
// notes says it was left out.
func flattenTool(t responsesTool, notes *[]string) []chatTool {
	switch t.Type {
	case "function":
		return []chatTool{{Type: "function", Function: &t.functionDef}}
	case "namespace":
		var out []chatTool
		for _, inner := range t.Tools {
			out = append(out, flattenTool(inner, notes)...)
		}
		return out
	}
	*notes = append(*notes, droppedTool(t.Type, t.Name))
	return nil
}

// inputItems reads 'input': a string (one user message) or a list of
// input items.
func (s *Server) inputItems(ctx context.Context, raw json.RawMessage) ([]convItem, *Error) {
	in := bytes.TrimSpace(raw)
	switch {
	case len(in) == 0 || string(in) == "null":
		return nil, badRequest("input", "missing_input", "'input' is required: a string, or a list of input items.")
	case in[0] == '"':
		return []convItem{{msgs: []chatMessage{{Role: "user", Content: in}}}}, nil
	case in[0] != '[':
		return nil, badRequest("input", "invalid_input", "'input' must be a string or a list of input items.")
	}
	var items []responsesItem
	if err := json.Unmarshal(in, &items); err != nil {
		return nil, badRequest("input", "invalid_input", "'input' is not a list of input items: %v", err)
	}
	out := make([]convItem, 0, len(items))
	for i, it := range items {
		ci := convItem{id: it.ID}
		if it.Type == "" && it.Role == "" && it.ID != "" {
			it.Type = "item_reference" // its type is optional
		}
		switch it.Type {
		case "", "message":
			ci.msgs = []chatMessage{{Role: it.Role, Content: it.Content}}
		case "function_call":
			c := wireToolCall{ID: it.CallID, Type: "function"}
			c.Function.Name, c.Function.Arguments = it.Name, it.Arguments
			ci.msgs = []chatMessage{{Role: "assistant", ToolCalls: []wireToolCall{c}}}
		case "function_call_output":
			ci.msgs = []chatMessage{{Role: "tool", ToolCallID: it.CallID, Content: it.Output}}
		case "reasoning":
			// A previous response's reasoning: not part of the conversation.
		case "item_reference":
			msgs, ok, e := s.kept.item(ctx, it.ID)
			if e != nil {
				return nil, e
			}
			if !ok {
				return nil, &Error{Status: http.StatusNotFound, Param: fmt.Sprintf("input[%d].id", i), Code: "item_not_found",
					Message: fmt.Sprintf("Item with id '%s' not found (massgen keeps the items of its latest responses made with store: true: %s).", it.ID, s.keptWhere())}
			}
			ci = convItem{msgs: msgs, ref: it.ID} // the kept item keeps its id
		default:
			return nil, badRequest(fmt.Sprintf("input[%d].type", i), "unsupported_input",
				"Input items of type %q are not supported: use message, function_call, function_call_output and item_reference.", it.Type)
		}
		out = append(out, ci)
	}
	return out, nil
}

// responsesFormat writes Responses: a response object, or its events as
// the run happens (responsesStream). Both build the output items alike:
// a whole Response is the stream's items, taken from the same events.
type responsesFormat struct {
	in   *responsesInput
	keep *responseStore
	hold bool // the answer goes out once checked (chatFormat.hold)
}

func (f responsesFormat) complete(w http.ResponseWriter, res *RunResult, info *massgenInfo, model string, start time.Time, events []event.Event) {
	st := newResponsesStream(nil, info.RunID, model, start, 0, nil, f.in, f.keep)
	st.hold = f.hold
	for _, e := range events {
		st.observe(e)
	}
	r, e := st.finishLocked(res, info)
	if e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, r)
}

// replays is true: a whole Response has the stream's reasoning item.
func (responsesFormat) replays() bool { return true }

func (f responsesFormat) stream(w http.ResponseWriter, id, model string, start time.Time, timeout time.Duration, gone func()) runStream {
	st := newResponsesStream(w, id, model, start, timeout, gone, f.in, f.keep)
	st.hold = f.hold
	return st
}

// keepOutput keeps the response (its input, then its output items, and
// the Response object) for previous_response_id, item_reference and GET
// /v1/responses/{id}, unless the request said store: false. An error
// says it could not be kept: the client must get it instead of r.
func (f responsesFormat) keepOutput(r response) *Error {
	if f.in == nil || !f.in.store || f.keep == nil {
		return nil
	}
	var out []convItem
	for _, item := range r.Output {
		switch it := item.(type) {
		case message:
			var texts []string
			for _, c := range it.Content {
				texts = append(texts, c.Text)
			}
			b, _ := json.Marshal(strings.Join(texts, ""))
			out = append(out, convItem{id: it.ID, msgs: []chatMessage{{Role: "assistant", Content: b}}})
		case functionCall:
			c := wireToolCall{ID: it.CallID, Type: "function"}
			c.Function.Name, c.Function.Arguments = it.Name, it.Arguments
			out = append(out, convItem{id: it.ID, msgs: []chatMessage{{Role: "assistant", ToolCalls: []wireToolCall{c}}}})
		case reasoning:
			out = append(out, convItem{id: it.ID})
		}
	}
	object, _ := json.Marshal(r)
	return f.keep.put(r.ID, time.Unix(r.CreatedAt, 0), f.in.conv, out, object)
}

// response is a Response object, with the members clients read; the
// request's settings are echoed as OpenAI does.
type response struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"` // "response"
	CreatedAt          int64           `json:"created_at"`
	Status             string          `json:"status"` // in_progress | completed | failed
	Error              *errorObject    `json:"error"`
	IncompleteDetails  *struct{}       `json:"incomplete_details"`
	Instructions       json.RawMessage `json:"instructions"`
	MaxOutputTokens    *int64          `json:"max_output_tokens"`
	Metadata           json.RawMessage `json:"metadata"`
	Model              string          `json:"model"`
	Output             []any           `json:"output"`
	ParallelToolCalls  bool            `json:"parallel_tool_calls"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Reasoning          json.RawMessage `json:"reasoning"`
	Store              bool            `json:"store"`
	Background         bool            `json:"background"`
	Temperature        *float64        `json:"temperature"`
	Text               json.RawMessage `json:"text"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Tools              []any           `json:"tools"`
	TopP               *float64        `json:"top_p"`
	Truncation         string          `json:"truncation"`
	Usage              *responsesUsage `json:"usage"`
	User               *string         `json:"user,omitempty"`
	Massgen            *massgenInfo    `json:"massgen,omitempty"`
}

type responsesUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

func newResponse(id, model string, start time.Time, status string, output []any, u *responsesUsage, info *massgenInfo, in *responsesInput) response {
	if output == nil {
		output = []any{}
	}
	one := 1.0
	r := response{ID: "resp_" + id, Object: "response", CreatedAt: start.Unix(), Status: status, Model: model,
		Output: output, ParallelToolCalls: true, ToolChoice: json.RawMessage(`"auto"`), Tools: []any{}, Usage: u, Massgen: info,
		Instructions: json.RawMessage("null"), Metadata: json.RawMessage("{}"), Reasoning: json.RawMessage(`{"effort":null,"summary":null}`),
		Store: true, Temperature: &one, TopP: &one, Text: json.RawMessage(`{"format":{"type":"text"}}`), Truncation: "disabled"}
	if in == nil {
		return r
	}
	q := in.req
	r.Store, r.Background = in.store, q.Background
	r.MaxOutputTokens, r.PreviousResponseID, r.User = q.MaxOutputTokens, q.PreviousResponseID, q.User
	if q.Temperature != nil {
		r.Temperature = q.Temperature
	}
	if q.TopP != nil {
		r.TopP = q.TopP
	}
	if q.ParallelToolCalls != nil {
		r.ParallelToolCalls = *q.ParallelToolCalls
	}
	if q.Truncation != nil {
		r.Truncation = *q.Truncation
	}
	for _, f := range []struct {
		dst *json.RawMessage
		src json.RawMessage
	}{{&r.Instructions, q.Instructions}, {&r.Metadata, q.Metadata}, {&r.Reasoning, q.Reasoning}, {&r.Text, q.Text}, {&r.ToolChoice, q.ToolChoice}} {
		if len(f.src) > 0 && string(f.src) != "null" {
			*f.dst = f.src
		}
	}
	for _, t := range q.Tools {
		r.Tools = append(r.Tools, t)
	}
	return r
}

func usagePtr(res *RunResult) *responsesUsage {
	u := &responsesUsage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
		TotalTokens: res.Usage.InputTokens + res.Usage.OutputTokens}
	u.InputTokensDetails.CachedTokens = res.Usage.CachedTokens
	u.OutputTokensDetails.ReasoningTokens = res.Usage.ReasoningTokens
	return u
}

// Output items.

type outputText struct {
	Type        string `json:"type"` // "output_text"
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

type message struct {
	ID      string       `json:"id"`
	Type    string       `json:"type"` // "message"
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

func messageItem(id, status, text string) message {
	m := message{ID: id, Type: "message", Status: status, Role: "assistant", Content: []outputText{}}
	if status == "completed" {
		m.Content = append(m.Content, outputText{Type: "output_text", Text: text, Annotations: []any{}})
	}
	return m
}

type summaryText struct {
	Type string `json:"type"` // "summary_text"
	Text string `json:"text"`
}

type reasoning struct {
	ID      string        `json:"id"`
	Type    string        `json:"type"` // "reasoning"
	Summary []summaryText `json:"summary"`
}

type functionCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"` // "function_call"
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func functionCallItem(runID string, i int, callID, name, args, status string) functionCall {
	if callID == "" {
		callID = fmt.Sprintf("call_%d", i)
	}
	return functionCall{ID: fmt.Sprintf("fc_%s_%d", runID, i), Type: "function_call", Status: status,
		CallID: callID, Name: name, Arguments: args}
}
