package llmsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

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

	toolNames []string // function names offered, in order
	voteEnum  []string // enum of the vote tool's agent_id
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

// decodeRequest parses and checks a request body. The error text is what the
// client sees in its 400.
func decodeRequest(body []byte) (*chatRequest, error) {
	req := new(chatRequest)
	if err := json.Unmarshal(body, req); err != nil {
		return nil, fmt.Errorf("we could not parse the JSON body of your request: %v", err)
	}
	if req.Model == "" {
		return nil, errors.New("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("'messages' must contain at least one message")
	}
	for i, t := range req.Tools {
		if t.Type != "" && t.Type != "function" {
			continue // custom tools have no function name; nothing to offer
		}
		if t.Function.Name == "" {
			return nil, fmt.Errorf("missing required parameter: 'tools[%d].function.name'", i)
		}
		req.toolNames = append(req.toolNames, t.Function.Name)
		if t.Function.Name == "vote" {
			req.voteEnum = voteEnum(t.Function.Parameters)
		}
	}
	return req, nil
}

// voteEnum reads properties.agent_id.enum of the vote tool's schema.
func voteEnum(params json.RawMessage) []string {
	var schema struct {
		Properties struct {
			AgentID struct {
				Enum []string `json:"enum"`
			} `json:"agent_id"`
		} `json:"properties"`
	}
	if json.Unmarshal(params, &schema) != nil {
		return nil
	}
	return schema.Properties.AgentID.Enum
}

func (r *chatRequest) offers(name string) bool {
	for _, n := range r.toolNames {
		if n == name {
			return true
		}
	}
	return false
}

func (r *chatRequest) lastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return string(r.Messages[i].Content)
		}
	}
	return ""
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
