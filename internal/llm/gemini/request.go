package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/massgen/massgen/internal/llm"
)

// buildRequest maps a provider-neutral request onto the contents and config
// of a generateContent call.
func buildRequest(req *llm.Request, model string) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	contents, system, err := messages(req.Messages, model)
	if err != nil {
		return nil, nil, err
	}
	config := &genai.GenerateContentConfig{
		// Continuation is done here, not by the SDK: its automatic mode
		// also re-sends the whole request after a dropped connection,
		// which is a retry, and retries belong to llm.WithRetry.
		AutomaticContinuation: genai.Ptr(false),
	}
	if len(system) > 0 {
		config.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: system}
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			// parametersJsonSchema takes the JSON Schema as it is, where
			// the older `parameters` field wants Google's OpenAPI subset
			// (upper-case types, no $defs, no additionalProperties).
			// A function without arguments simply has no schema.
			if len(t.Parameters) > 0 {
				d.ParametersJsonSchema = normalize(t.Parameters)
			}
			decls = append(decls, d)
		}
		config.Tools = append(config.Tools, &genai.Tool{FunctionDeclarations: decls})
	}
	if err := applyParams(config, req.Params); err != nil {
		return nil, nil, err
	}
	return contents, config, nil
}

// messages converts the conversation. System messages become the system
// instruction wherever they stand (Gemini has no system role in contents);
// assistant turns become "model" contents; tool results become
// functionResponse parts of a "user" content, consecutive results sharing
// one content as the API expects for parallel calls.
func messages(msgs []llm.Message, model string) (contents []*genai.Content, system []*genai.Part, err error) {
	names := map[string]string{} // call id → function name, for functionResponse
	var results *genai.Content   // the content collecting consecutive tool results
	for i, m := range msgs {
		if m.Role != llm.RoleTool {
			results = nil
		}
		switch m.Role {
		case llm.RoleSystem, "developer":
			if m.Content != "" {
				system = append(system, &genai.Part{Text: m.Content})
			}
		case llm.RoleUser:
			// The API rejects a content without parts.
			if m.Content != "" {
				contents = append(contents, genai.NewContentFromText(m.Content, genai.RoleUser))
			}
		case llm.RoleAssistant:
			c, err := assistant(m, model, names)
			if err != nil {
				return nil, nil, fmt.Errorf("message %d: %w", i, err)
			}
			if c != nil {
				contents = append(contents, c)
			}
		case llm.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				return nil, nil, fmt.Errorf("message %d: tool result for call %q, which no earlier assistant message made (Gemini needs the function name)", i, m.ToolCallID)
			}
			// Text only, m.Images are dropped: images inside a function
			// response are a Gemini 3 feature that older models reject, and
			// the text already describes each image.
			part := &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: m.ToolCallID, Name: name, Response: toolResponse(m.Content, m.IsError)}}
			if results == nil {
				results = &genai.Content{Role: genai.RoleUser}
				contents = append(contents, results)
			}
			results.Parts = append(results.Parts, part)
		default:
			return nil, nil, fmt.Errorf("message %d: unsupported role %q", i, m.Role)
		}
	}
	return contents, system, nil
}

// assistant converts one assistant message, or returns nil when it has
// nothing to say. It records the function names of its calls in names.
func assistant(m llm.Message, model string, names map[string]string) (*genai.Content, error) {
	c := &genai.Content{Role: genai.RoleModel}
	if m.Content != "" {
		c.Parts = append(c.Parts, &genai.Part{Text: m.Content})
	}
	var first *genai.Part
	signed := false
	for _, tc := range m.ToolCalls {
		args, err := arguments(tc.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool call %s (%s): %w", tc.ID, tc.Name, err)
		}
		p := &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: args}}
		if sig := signatures.get(tc.ID, tc.Name); sig != nil {
			p.ThoughtSignature = sig
			signed = true
		}
		if first == nil {
			first = p
		}
		names[tc.ID] = tc.Name
		c.Parts = append(c.Parts, p)
	}
	// Gemini signs only the first call of a step; when this process never
	// saw that signature, the placeholder keeps Gemini 3 from refusing the
	// whole conversation.
	if first != nil && !signed && enforcesSignatures(model) {
		first.ThoughtSignature = []byte(skipSignature)
	}
	if len(c.Parts) == 0 {
		return nil, nil
	}
	return c, nil
}

// arguments parses a call's arguments back into the object Gemini sent.
func arguments(raw string) (map[string]any, error) {
	if strings.TrimSpace(raw) == "" {
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		return nil, errors.New("arguments are not a JSON object")
	}
	if args == nil { // "null"
		args = map[string]any{}
	}
	return args, nil
}

// toolResponse is the functionResponse.response object of a tool result:
// the result itself when it is a JSON object, else {"content": text}; a
// failed call's text goes under "error", the key Google documents for it.
func toolResponse(content string, isError bool) map[string]any {
	if isError {
		return map[string]any{"error": content}
	}
	var obj map[string]any
	if t := strings.TrimSpace(content); strings.HasPrefix(t, "{") && json.Unmarshal([]byte(t), &obj) == nil && obj != nil {
		return obj
	}
	return map[string]any{"content": content}
}
