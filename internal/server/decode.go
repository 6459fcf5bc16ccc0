package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/massgen/massgen/internal/inputlimit"
	"github.com/massgen/massgen/internal/llm"
)

// ReservedTools are massgen's workflow tool names; a client tool may not
// use them (the agents would confuse the two).
var ReservedTools = []string{"new_answer", "vote", "submit", "restart_orchestration"}

// chatRequest is the part of an OpenAI chat completion request massgen
// reads. temperature, top_p and max_tokens go to single-model runs
// (RunRequest.Params); response_format to the final presentation
// (schema.go); tool_choice, seed and the other fields are accepted and
// ignored.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []chatTool `json:"tools"`
	N     *int       `json:"n"`

	Temperature         *float64 `json:"temperature"`
	TopP                *float64 `json:"top_p"`
	MaxTokens           *int64   `json:"max_tokens"`
	MaxCompletionTokens *int64   `json:"max_completion_tokens"`

	ResponseFormat json.RawMessage `json:"response_format"`

	// Set by the decoders, not read from the body.
	format *OutputFormat // response_format / text.format asking for JSON
	notes  []string      // what the server left out (tools it cannot run), for the massgen object
	resp   *responsesInput
}

// params are the sampling parameters the client set, under the names the
// adapters read (each maps them onto its provider's).
func (req *chatRequest) params() (map[string]any, *Error) {
	p := map[string]any{}
	if v := req.Temperature; v != nil {
		if *v < 0 || *v > 2 {
			return nil, badRequest("temperature", "invalid_value", "'temperature' must be between 0 and 2.")
		}
		p["temperature"] = *v
	}
	if v := req.TopP; v != nil {
		if *v < 0 || *v > 1 {
			return nil, badRequest("top_p", "invalid_value", "'top_p' must be between 0 and 1.")
		}
		p["top_p"] = *v
	}
	// max_completion_tokens is the newer name and wins; the adapters read
	// max_tokens and map it onto their provider's.
	for _, f := range []struct {
		name string
		v    *int64
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if f.v == nil {
			continue
		}
		if *f.v < 1 {
			return nil, badRequest(f.name, "invalid_value", "'%s' must be a positive number of tokens.", f.name)
		}
		p["max_tokens"] = *f.v
	}
	if len(p) == 0 {
		return nil, nil
	}
	return p, nil
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function *functionDef `json:"function"`
}

// functionDef is a function tool's definition, in both APIs.
type functionDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// wireToolCall is a tool call as Chat Completions writes it, in requests,
// responses and stream deltas (Index only in deltas).
type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func badRequest(param, code, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Param: param, Code: code, Message: fmt.Sprintf(format, args...)}
}

// readJSON reads the request body (at most limit bytes; 413 past it),
// refuses one nested deeper than inputlimit.MaxJSONDepth, and decodes it
// into v, which what names in errors.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, v any, what string) *Error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: "request_too_large",
				Message: fmt.Sprintf("The request body is larger than the server's limit of %d bytes.", limit)}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &Error{Status: http.StatusRequestTimeout, Code: "request_timeout",
				Message: "The request body did not arrive in time; send it whole, at once."}
		}
		return badRequest("", "invalid_body", "Could not read the request body: %v", err)
	}
	// encoding/json stops at 10000 levels, but a body nested that deep
	// still builds (and every agent copies) a tree of that depth in tool
	// parameters; no client needs more than inputlimit.MaxJSONDepth.
	if err := inputlimit.CheckJSON(body, inputlimit.MaxJSONDepth); err != nil {
		return badRequest("", "invalid_json", "The request body is refused: %v. Requests need far fewer levels: flatten the tool parameters or response_format schema.", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return badRequest("", "invalid_json", "The request body is not valid JSON for %s: %v", what, err)
	}
	if dec.More() {
		return badRequest("", "invalid_json", "The request body holds more than one JSON value.")
	}
	return nil
}

// decodeChat reads and checks a chat completion request (at most limit
// bytes).
func decodeChat(w http.ResponseWriter, r *http.Request, limit int64) (*chatRequest, *Error) {
	var req chatRequest
	if e := readJSON(w, r, limit, &req, "a chat completion"); e != nil {
		return nil, e
	}
	f, e := parseFormat(req.ResponseFormat, "response_format")
	if e != nil {
		return nil, e
	}
	req.format = f
	return req.check()
}

// check applies the rules every request shares, whichever API it came
// through.
func (req *chatRequest) check() (*chatRequest, *Error) {
	if len(req.Messages) == 0 {
		return nil, badRequest("messages", "missing_messages", "'messages' is required and must hold at least one message.")
	}
	if req.N != nil && *req.N != 1 {
		return nil, badRequest("n", "unsupported_parameter", "massgen returns one choice per request: 'n' must be 1.")
	}
	return req, nil
}

// runRequest turns the chat request into the run to make: the last user
// message is the question; earlier user and assistant messages (tool calls
// and tool results written out as text) are the history; system and
// developer messages are put before the question; tool calls and results
// after the last user message (a client returning tool output) are
// appended to it.
func (req *chatRequest) runRequest() (RunRequest, *Error) {
	var rr RunRequest
	last := -1
	for i, m := range req.Messages {
		if m.Role == "user" {
			last = i
		}
	}
	if last < 0 {
		return rr, badRequest("messages", "missing_user_message", "'messages' must include a user message: the last one is the question.")
	}
	var system []string
	var trail strings.Builder
	toolNames := map[string]string{} // tool_call_id → function name
	for i, m := range req.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return rr, badRequest(fmt.Sprintf("messages[%d].content", i), "invalid_content", "%v", err)
		}
		switch m.Role {
		case "system", "developer":
			if text != "" {
				system = append(system, text)
			}
		case "user":
			if i < last {
				rr.History = append(rr.History, llm.Message{Role: llm.RoleUser, Content: text})
			} else if i == last {
				rr.Question = text
			}
		case "assistant":
			calls := make([]string, 0, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				toolNames[c.ID] = c.Function.Name
				calls = append(calls, fmt.Sprintf("%s(%s)", c.Function.Name, c.Function.Arguments))
			}
			if i < last {
				if len(calls) > 0 {
					text = strings.TrimSpace(text + "\n[called " + strings.Join(calls, ", ") + "]")
				}
				rr.History = append(rr.History, llm.Message{Role: llm.RoleAssistant, Content: text})
			} else {
				if text != "" {
					fmt.Fprintf(&trail, "- The assistant replied: %s\n", text)
				}
				for _, c := range calls {
					fmt.Fprintf(&trail, "- The assistant called %s\n", c)
				}
			}
		case "tool", "function":
			name := toolNames[m.ToolCallID]
			if name == "" {
				name = m.Name
			}
			if name == "" {
				name = "a tool"
			}
			if i < last {
				rr.History = append(rr.History, llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("[result of %s: %s]", name, text)})
			} else {
				fmt.Fprintf(&trail, "- %s returned: %s\n", name, text)
			}
		default:
			return rr, badRequest(fmt.Sprintf("messages[%d].role", i), "invalid_role",
				"Unknown role %q: use system, developer, user, assistant or tool.", m.Role)
		}
	}
	if strings.TrimSpace(rr.Question) == "" {
		return rr, badRequest(fmt.Sprintf("messages[%d].content", last), "empty_question", "The last user message has no text.")
	}
	if len(system) > 0 {
		rr.Question = strings.Join(system, "\n\n") + "\n\n" + rr.Question
	}
	if trail.Len() > 0 {
		rr.Question += "\n\nTool calls made for this question so far, and their results:\n" + strings.TrimRight(trail.String(), "\n")
	}
	tools, e := req.clientTools()
	if e != nil {
		return rr, e
	}
	rr.Tools = tools
	rr.Output = req.format
	if rr.Params, e = req.params(); e != nil {
		return rr, e
	}
	if req.resp != nil {
		rr.PreviousLogDir = req.resp.prevLogDir
	}
	return rr, nil
}

// contentText is the text of a message's content: a string, null, or an
// array of parts whose text parts are joined with newlines (images and
// other parts are skipped: the agents are text-only here).
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content must be a string, null or an array of content parts")
	}
	var texts []string
	for _, p := range parts {
		if (p.Type == "text" || p.Type == "input_text" || p.Type == "output_text") && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// clientTools converts the request's function tools and rejects names
// that collide with massgen's workflow tools. Tools of other types (a
// chat completion's custom tools; the Responses decoder has already
// dropped hosted tools) are left out with a note: the client still gets
// an answer, and the massgen object says what was left out.
func (req *chatRequest) clientTools() ([]llm.ToolDef, *Error) {
	var out []llm.ToolDef
	var collisions []string
	seen := map[string]bool{}
	for i, t := range req.Tools {
		if t.Type != "function" {
			req.notes = append(req.notes, droppedTool(t.Type, ""))
			continue
		}
		if t.Function == nil {
			return nil, badRequest(fmt.Sprintf("tools[%d].function", i), "invalid_tool", "A function tool needs its 'function'.")
		}
		name := t.Function.Name
		if name == "" {
			return nil, badRequest(fmt.Sprintf("tools[%d].function.name", i), "invalid_tool", "Every tool needs a function name.")
		}
		if seen[name] {
			return nil, badRequest(fmt.Sprintf("tools[%d].function.name", i), "duplicate_tool", "The tool name %q appears twice.", name)
		}
		seen[name] = true
		if slices.Contains(ReservedTools, name) {
			collisions = append(collisions, name)
			continue
		}
		params := t.Function.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out = append(out, llm.ToolDef{Name: name, Description: t.Function.Description, Parameters: params})
	}
	if len(collisions) > 0 {
		return nil, &Error{Status: http.StatusBadRequest, Param: "tools", Code: "tool_name_collision", Collisions: collisions,
			Message: "Client tool names collide with reserved MassGen workflow tools: " + strings.Join(collisions, ", ") +
				" (reserved: " + strings.Join(ReservedTools, ", ") + "). Rename these tools."}
	}
	return out, nil
}

// droppedTool is the note for a tool the team cannot call.
func droppedTool(typ, name string) string {
	if name != "" {
		typ += " " + name
	}
	return fmt.Sprintf("tool %s left out: massgen's agents call function tools only", typ)
}
