package chatcompat

import (
	"fmt"
	"iter"
	"reflect"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/massgen/massgen/internal/llm"
)

// reservedParams are body keys the adapter owns. A pass-through parameter
// with one of these names would corrupt the request (a second message list,
// `stream: true` on a request read as JSON), so it is dropped.
var reservedParams = map[string]bool{
	"model":          true,
	"messages":       true,
	"tools":          true,
	"stream":         true,
	"stream_options": true,
}

// buildParams maps a provider-neutral request onto Chat Completions params.
// Request.Params go into the body verbatim as extra fields, and the content
// of an `extra_body` map is merged at the top level, as the Python SDK does.
func buildParams(req *llm.Request, model string, stream bool) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	for i, m := range req.Messages {
		msg, err := message(m)
		if err != nil {
			return p, fmt.Errorf("message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, msg)
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, tool(t))
	}
	if stream {
		p.StreamOptions.IncludeUsage = param.NewOpt(true)
	}
	if extra := extraFields(req.Params); len(extra) > 0 {
		p.SetExtraFields(extra)
	}
	return p, nil
}

func message(m llm.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case "developer":
		return openai.DeveloperMessage(m.Content), nil
	case llm.RoleUser:
		return openai.UserMessage(m.Content), nil
	case llm.RoleTool:
		// Text only, m.Images are dropped: a Chat Completions tool message
		// takes text parts alone (images are allowed in user messages only),
		// and the text already describes each image.
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case llm.RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		// An assistant turn that only called tools carries no content at all:
		// several compatible servers reject `content: ""` next to tool_calls.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      c.Name,
						Arguments: c.Arguments,
					},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unsupported role %q", m.Role)
}

func tool(t llm.ToolDef) openai.ChatCompletionToolUnionParam {
	def := shared.FunctionDefinitionParam{
		Name:       t.Name,
		Parameters: shared.FunctionParameters(t.Parameters),
	}
	// Some servers (older vLLM, llama.cpp) reject a function without a
	// parameters object, so a tool without arguments gets an empty schema.
	if def.Parameters == nil {
		def.Parameters = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	if t.Description != "" {
		def.Description = param.NewOpt(t.Description)
	}
	return openai.ChatCompletionFunctionTool(def)
}

// extraFields flattens Request.Params into top-level body fields.
func extraFields(params map[string]any) map[string]any {
	if len(params) == 0 {
		return nil
	}
	out := make(map[string]any, len(params))
	for k, v := range params {
		if k == "extra_body" || reservedParams[k] {
			continue
		}
		out[k] = v
	}
	// extra_body wins over a top-level key of the same name: it is the more
	// specific instruction.
	for k, v := range mapEntries(params["extra_body"]) {
		if !reservedParams[k] {
			out[k] = v
		}
	}
	return out
}

// mapEntries iterates a map of any key type (YAML decoders differ on
// map[string]any versus map[any]any); anything else yields nothing.
func mapEntries(v any) iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Map {
			return
		}
		it := rv.MapRange()
		for it.Next() {
			if !yield(fmt.Sprint(it.Key().Interface()), it.Value().Interface()) {
				return
			}
		}
	}
}
