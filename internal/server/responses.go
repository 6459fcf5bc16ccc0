package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// The Responses API (POST /v1/responses), for the clients that speak it
// (OpenAI's Agents SDK, newer tools): the request is read into the same
// chatRequest as a chat completion, so that both APIs run alike, and the
// run is written back as a Response (responsesFormat, responsesStream).

// responsesRequest is the part of a Responses request massgen reads.
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions"`
	Stream             bool            `json:"stream"`
	Tools              []responsesTool `json:"tools"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	MaxOutputTokens    *int64          `json:"max_output_tokens"`
	PreviousResponseID *string         `json:"previous_response_id"`
}

// responsesTool is a tool as the Responses API writes it: a function's
// definition is flat, not nested under "function".
type responsesTool struct {
	Type string `json:"type"`
	functionDef
}

// responsesItem is an input item: a message, a function call the
// assistant made, or a function call's output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// decodeResponses reads a Responses request and turns it into the chat
// request it amounts to: instructions become a system message, input items
// become messages, function_call items assistant tool calls, and
// function_call_output items tool results.
func decodeResponses(w http.ResponseWriter, r *http.Request, limit int64) (*chatRequest, *Error) {
	var rr responsesRequest
	if e := readJSON(w, r, limit, &rr, "a response"); e != nil {
		return nil, e
	}
	if rr.PreviousResponseID != nil && *rr.PreviousResponseID != "" {
		return nil, badRequest("previous_response_id", "unsupported_parameter",
			"massgen keeps no responses: send the whole conversation in 'input' instead of 'previous_response_id'.")
	}
	req := &chatRequest{Model: rr.Model, Stream: rr.Stream, Temperature: rr.Temperature, TopP: rr.TopP, MaxTokens: rr.MaxOutputTokens}
	text := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	if rr.Instructions != nil && *rr.Instructions != "" {
		req.Messages = append(req.Messages, chatMessage{Role: "system", Content: text(*rr.Instructions)})
	}
	in := bytes.TrimSpace(rr.Input)
	switch {
	case len(in) == 0 || string(in) == "null":
		return nil, badRequest("input", "missing_input", "'input' is required: a string, or a list of input items.")
	case in[0] == '"':
		req.Messages = append(req.Messages, chatMessage{Role: "user", Content: in})
	case in[0] == '[':
		var items []responsesItem
		if err := json.Unmarshal(in, &items); err != nil {
			return nil, badRequest("input", "invalid_input", "'input' is not a list of input items: %v", err)
		}
		for i, it := range items {
			switch it.Type {
			case "", "message":
				req.Messages = append(req.Messages, chatMessage{Role: it.Role, Content: it.Content})
			case "function_call":
				c := wireToolCall{ID: it.CallID, Type: "function"}
				c.Function.Name, c.Function.Arguments = it.Name, it.Arguments
				req.Messages = append(req.Messages, chatMessage{Role: "assistant", ToolCalls: []wireToolCall{c}})
			case "function_call_output":
				req.Messages = append(req.Messages, chatMessage{Role: "tool", ToolCallID: it.CallID, Content: it.Output})
			case "reasoning":
				// A previous response's reasoning: not part of the conversation.
			default:
				return nil, badRequest(fmt.Sprintf("input[%d].type", i), "unsupported_input",
					"Input items of type %q are not supported: use messages, function_call and function_call_output.", it.Type)
			}
		}
	default:
		return nil, badRequest("input", "invalid_input", "'input' must be a string or a list of input items.")
	}
	// clientTools checks them, as for a chat completion (function tools
	// only, no workflow tool names).
	for _, t := range rr.Tools {
		req.Tools = append(req.Tools, chatTool{Type: t.Type, Function: &t.functionDef})
	}
	return req, nil
}

// responsesFormat writes Responses: a response object, or its events as
// the run happens (responsesStream).
type responsesFormat struct{}

func (responsesFormat) complete(w http.ResponseWriter, res *RunResult, info *massgenInfo, model string, start time.Time) {
	var output []any
	if res.Final != "" || len(res.ToolCalls) == 0 {
		output = append(output, messageItem("msg_"+info.RunID+"_0", "completed", res.Final))
	}
	for i, c := range res.ToolCalls {
		output = append(output, functionCallItem(info.RunID, i, c.ID, c.Name, c.Arguments, "completed"))
	}
	writeJSON(w, http.StatusOK, newResponse(info.RunID, model, start, "completed", output, usagePtr(res), info))
}

func (responsesFormat) stream(w http.ResponseWriter, id, model string, start time.Time, timeout time.Duration, gone func()) runStream {
	return newResponsesStream(w, id, model, start, timeout, gone)
}

// response is a Response object, with the members clients read.
type response struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"` // "response"
	CreatedAt         int64           `json:"created_at"`
	Status            string          `json:"status"` // in_progress | completed | failed
	Error             *errorObject    `json:"error"`
	IncompleteDetails *struct{}       `json:"incomplete_details"`
	Model             string          `json:"model"`
	Output            []any           `json:"output"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	ToolChoice        string          `json:"tool_choice"`
	Tools             []any           `json:"tools"`
	Usage             *responsesUsage `json:"usage"`
	Massgen           *massgenInfo    `json:"massgen,omitempty"`
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

func newResponse(id, model string, start time.Time, status string, output []any, u *responsesUsage, info *massgenInfo) response {
	if output == nil {
		output = []any{}
	}
	return response{ID: "resp_" + id, Object: "response", CreatedAt: start.Unix(), Status: status, Model: model,
		Output: output, ParallelToolCalls: true, ToolChoice: "auto", Tools: []any{}, Usage: u, Massgen: info}
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
