package openai

import (
	"encoding/base64"
	"fmt"
	"iter"
	"reflect"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llm"
)

// reservedParams are body keys the adapter owns. A pass-through parameter
// with one of these names would corrupt the request or make it depend on
// server-side state (previous_response_id, conversation, store), which the
// adapter never does, so it is dropped.
var reservedParams = map[string]bool{
	"model":                true,
	"input":                true,
	"instructions":         true,
	"tools":                true,
	"stream":               true,
	"store":                true,
	"previous_response_id": true,
	"conversation":         true,
	"background":           true,
	// massgen's switches for the built-in tools (see builtinTools)
	"enable_web_search":       true,
	"enable_code_interpreter": true,
}

// renamedParams are Chat Completions names MassGen configs use for the
// output limit; the Responses API calls it max_output_tokens.
var renamedParams = map[string]string{
	"max_tokens":            "max_output_tokens",
	"max_completion_tokens": "max_output_tokens",
}

// reasoningFallback says how much of the default reasoning object a model
// still gets, after the server refused part of it (see model.fallback).
type reasoningFallback int

const (
	fullDefault reasoningFallback = iota // effort (where set) and summary
	noSummary                            // effort only
	noDefault                            // nothing
)

// defaults records what the adapter added on its own, so that a refusal of
// it can be told from a refusal of the user's configuration.
type defaults struct {
	summary bool // reasoning.summary was added
	effort  bool // reasoning.effort was added
}

// buildParams maps a provider-neutral request onto Responses params.
// Request.Params go into the body verbatim as extra fields (after the
// renames above), and the content of an `extra_body` map is merged at the
// top level, as the Python SDK does.
func buildParams(req *llm.Request, model string, fb reasoningFallback) (responses.ResponseNewParams, defaults, error) {
	p := responses.ResponseNewParams{
		Model: model,
		// The full conversation goes with every request; nothing is kept on
		// OpenAI's side between turns.
		Store: param.NewOpt(false),
	}
	var instructions []string
	var input responses.ResponseInputParam
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem, "developer":
			if m.Content != "" {
				instructions = append(instructions, m.Content)
			}
			continue
		}
		items, err := inputItems(m)
		if err != nil {
			return p, defaults{}, fmt.Errorf("message %d: %w", i, err)
		}
		input = append(input, items...)
	}
	if len(instructions) > 0 {
		p.Instructions = param.NewOpt(strings.Join(instructions, "\n\n"))
	}
	p.Input.OfInputItemList = input
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, tool(t))
	}
	p.Tools = append(p.Tools, builtinTools(req.Params)...)
	extra := extraFields(req.Params)
	var added defaults
	if _, configured := extra["reasoning"]; !configured {
		if r, d := defaultReasoning(model, fb); r != nil {
			extra["reasoning"] = r
			added = d
		}
	}
	// A parameter set to null in the config means "send nothing", which also
	// keeps the default above away.
	for k, v := range extra {
		if v == nil {
			delete(extra, k)
		}
	}
	if len(extra) > 0 {
		p.SetExtraFields(extra)
	}
	return p, added, nil
}

// builtinTools are OpenAI's server-side tools, switched on by MassGen's
// backend flags: the model uses them within its own response, and massgen
// only sees the text that results.
func builtinTools(params map[string]any) []responses.ToolUnionParam {
	var tools []responses.ToolUnionParam
	if on, _ := params["enable_web_search"].(bool); on {
		tools = append(tools, responses.ToolUnionParam{OfWebSearch: &responses.WebSearchToolParam{Type: "web_search"}})
	}
	if on, _ := params["enable_code_interpreter"].(bool); on {
		tools = append(tools, responses.ToolUnionParam{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
			Container: responses.ToolCodeInterpreterContainerUnionParam{
				OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{},
			},
		}})
	}
	return tools
}

// inputItems turns one user, assistant or tool message into input items.
func inputItems(m llm.Message) ([]responses.ResponseInputItemUnionParam, error) {
	switch m.Role {
	case llm.RoleUser:
		return []responses.ResponseInputItemUnionParam{
			responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser),
		}, nil
	case llm.RoleAssistant:
		var items []responses.ResponseInputItemUnionParam
		// An assistant turn that only called tools is just its calls: an
		// empty assistant message adds nothing the model could use.
		if m.Content != "" {
			items = append(items, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleAssistant))
		}
		for _, c := range m.ToolCalls {
			items = append(items, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.ID, c.Name))
		}
		return items, nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return nil, fmt.Errorf("tool result without a tool call id")
		}
		out := responses.ResponseInputItemParamOfFunctionCallOutput(m.Content)
		out.OfFunctionCallOutput.CallID = param.NewOpt(m.ToolCallID)
		if len(m.Images) > 0 {
			out.OfFunctionCallOutput.Output = responses.ResponseInputItemFunctionCallOutputOutputUnionParam{
				OfResponseFunctionCallOutputItemArray: outputWithImages(m),
			}
		}
		return []responses.ResponseInputItemUnionParam{out}, nil
	}
	return nil, fmt.Errorf("unsupported role %q", m.Role)
}

func tool(t llm.ToolDef) responses.ToolUnionParam {
	params := t.Parameters
	// The API rejects a function without a parameters object, so a tool
	// without arguments gets an empty schema.
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	// Not strict: strict mode demands every property be required and
	// additionalProperties be false, which MCP and MassGen schemas are not.
	u := responses.ToolParamOfFunction(t.Name, params, false)
	if t.Description != "" {
		u.OfFunction.Description = param.NewOpt(t.Description)
	}
	return u
}

// extraFields flattens Request.Params into top-level body fields. It always
// returns a map the caller may add to.
func extraFields(params map[string]any) map[string]any {
	out := make(map[string]any, len(params))
	set := func(k string, v any) {
		if reservedParams[k] {
			return
		}
		if to, ok := renamedParams[k]; ok {
			// The Responses name wins when a config has both.
			if _, both := params[to]; both {
				return
			}
			k = to
		}
		out[k] = v
	}
	for k, v := range params {
		if k != "extra_body" {
			set(k, v)
		}
	}
	// extra_body wins over a top-level key of the same name: it is the more
	// specific instruction.
	for k, v := range mapEntries(params["extra_body"]) {
		set(k, v)
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

// defaultReasoning is the reasoning object sent when the config has none.
//
// Reasoning models think whether asked to or not, but without a summary
// request the stream carries none of it and the user watches a silent agent;
// "auto" gives the most detailed summary the model offers. GPT-5.1 and 5.2
// default to no reasoning at all (effort "none"), which MassGen's agents,
// expected to think, should not get silently: they get "medium", the effort
// GPT-5 defaults to.
func defaultReasoning(model string, fb reasoningFallback) (map[string]any, defaults) {
	if fb == noDefault || !isReasoningModel(model) {
		return nil, defaults{}
	}
	r := map[string]any{}
	var d defaults
	name := strings.ToLower(model)
	if strings.HasPrefix(name, "gpt-5.1") || strings.HasPrefix(name, "gpt-5.2") {
		r["effort"] = "medium"
		d.effort = true
	}
	if fb == fullDefault {
		r["summary"] = "auto"
		d.summary = true
	}
	if len(r) == 0 {
		return nil, defaults{}
	}
	return r, d
}

// isReasoningModel reports whether model takes a `reasoning` parameter:
// GPT-5 and the o-series, except the chat variants (gpt-5-chat-latest is
// GPT-5 without reasoning) and the retired o1 previews, which took none.
func isReasoningModel(model string) bool {
	name := strings.ToLower(model)
	if strings.Contains(name, "-chat") || name == "o1-mini" || strings.HasPrefix(name, "o1-mini-") ||
		strings.HasPrefix(name, "o1-preview") {
		return false
	}
	for _, prefix := range [...]string{"gpt-5", "o1", "o3", "o4"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// outputWithImages is a tool result with pictures as the Responses API's
// array output: the text first (it describes the images too), then each
// image as an input_image with a base64 data URL. A result without images
// stays a plain string, the form every compatible server takes.
func outputWithImages(m llm.Message) responses.ResponseFunctionCallOutputItemListParam {
	var items responses.ResponseFunctionCallOutputItemListParam
	if m.Content != "" {
		items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{
			OfInputText: &responses.ResponseInputTextContentParam{Text: m.Content},
		})
	}
	for _, img := range m.Images {
		items = append(items, responses.ResponseFunctionCallOutputItemUnionParam{
			OfInputImage: &responses.ResponseInputImageContentParam{
				ImageURL: param.NewOpt("data:" + img.MIME + ";base64," + base64.StdEncoding.EncodeToString(img.Data)),
			},
		})
	}
	return items
}
