package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"reflect"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/massgen/massgen/internal/llm"
)

// reservedParams are body keys the adapter owns. A pass-through parameter
// with one of these names would corrupt the request (a second message list,
// a system prompt that replaces the conversation's, `stream: false` on a
// request read as events), so it is dropped.
var reservedParams = map[string]bool{
	"model":    true,
	"messages": true,
	"system":   true,
	"tools":    true,
	"stream":   true,
	// massgen's switches for the server tools (see serverTools)
	"enable_web_search":     true,
	"enable_code_execution": true,
}

// built is one request, ready for the SDK.
type built struct {
	params anthropic.MessageNewParams
	opts   []option.RequestOption // per-request options (beta header)
}

// buildParams maps a provider-neutral request onto Messages params.
//
// Request.Params go into the body verbatim as extra fields (temperature,
// top_p, top_k, stop_sequences, thinking, tool_choice, metadata…), and the
// content of an `extra_body` map is merged at the top level, as the Python
// SDK does. Two keys are read rather than passed: max_tokens (the SDK's
// typed, required field) and betas (the anthropic-beta header, as the
// Python SDK's beta client sends them).
func (m *model) buildParams(req *llm.Request, modelName string) (built, error) {
	var b built
	if modelName == "" {
		return b, errors.New("no model: set Request.Model or Options.Model")
	}
	extra := flattenParams(req.Params)
	thinking := thinkingEnabled(extra["thinking"])

	p := &b.params
	p.Model = anthropic.Model(modelName)
	if v, ok := extra["max_tokens"]; ok {
		n, err := toInt(v)
		if err != nil || n <= 0 {
			return b, fmt.Errorf("max_tokens must be a positive integer, got %v", v)
		}
		p.MaxTokens = n
		delete(extra, "max_tokens")
	} else {
		p.MaxTokens = m.maxTokens
		// Thinking tokens count toward max_tokens, which must exceed the
		// budget: a large budget with the default would be refused.
		if budget := thinkingBudget(extra["thinking"]); budget >= p.MaxTokens {
			p.MaxTokens = budget + m.maxTokens
		}
	}
	if v, ok := extra["betas"]; ok {
		betas, err := toStrings(v)
		if err != nil {
			return b, fmt.Errorf("betas: %w", err)
		}
		if len(betas) > 0 {
			b.opts = append(b.opts, option.WithHeader("anthropic-beta", strings.Join(betas, ",")))
		}
		delete(extra, "betas")
	}

	system, msgs, err := m.messages(req.Messages, thinking)
	if err != nil {
		return b, err
	}
	if system != "" {
		// The stable prefix of every call of a turn is tools + system +
		// the task: a cache breakpoint here lets the second and later calls
		// (tool loops, retries, other agents with the same prompt) read it
		// from the cache.
		p.System = []anthropic.TextBlockParam{{Text: system, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	p.Messages = msgs
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, tool(t))
	}
	tools, beta := serverTools(req.Params)
	p.Tools = append(p.Tools, tools...)
	if beta != "" {
		b.opts = append(b.opts, option.WithHeaderAdd("anthropic-beta", beta))
	}
	if len(extra) > 0 {
		p.SetExtraFields(extra)
	}
	return b, nil
}

// serverTools are Anthropic's server-side tools, switched on by MassGen's
// backend flags; code execution also needs its beta header. Claude runs
// them inside its own response, and massgen only sees the resulting text.
func serverTools(params map[string]any) (tools []anthropic.ToolUnionParam, beta string) {
	if on, _ := params["enable_web_search"].(bool); on {
		tools = append(tools, anthropic.ToolUnionParam{OfWebSearchTool20250305: &anthropic.WebSearchTool20250305Param{MaxUses: param.NewOpt(int64(5))}})
	}
	if on, _ := params["enable_code_execution"].(bool); on {
		tools = append(tools, anthropic.ToolUnionParam{OfCodeExecutionTool20250522: &anthropic.CodeExecutionTool20250522Param{}})
		beta = "code-execution-2025-05-22"
	}
	return tools, beta
}

// turn is one message of the wire conversation being assembled.
type turn struct {
	role    string
	blocks  []anthropic.ContentBlockParamUnion
	results int // leading tool_result blocks
}

// messages splits the conversation into the system prompt and the
// alternating user/assistant turns the Messages API takes.
func (m *model) messages(in []llm.Message, thinking bool) (string, []anthropic.MessageParam, error) {
	var system []string
	var turns []*turn
	// add appends blocks to the conversation, merging them into the last
	// turn when it has the same role: several tool results must arrive in
	// one user message, and the API would merge consecutive turns anyway.
	add := func(role string, results int, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n == 0 || turns[n-1].role != role {
			turns = append(turns, &turn{role: role})
		}
		t := turns[len(turns)-1]
		if results > 0 {
			// tool_result blocks must lead their user message.
			t.blocks = append(t.blocks[:t.results], append(blocks, t.blocks[t.results:]...)...)
			t.results += results
			return
		}
		t.blocks = append(t.blocks, blocks...)
	}
	for i, msg := range in {
		switch msg.Role {
		case llm.RoleSystem, "developer":
			if msg.Content != "" {
				system = append(system, msg.Content)
			}
		case llm.RoleUser:
			add("user", 0, textBlocks(msg.Content)...)
		case llm.RoleTool:
			if msg.ToolCallID == "" {
				return "", nil, fmt.Errorf("message %d: tool result without a tool call id", i)
			}
			r := anthropic.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
			if msg.IsError {
				r.IsError = param.NewOpt(true)
			}
			if msg.Content != "" {
				r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: msg.Content}}}
			}
			r.Content = append(r.Content, imageBlocks(msg.Images)...)
			add("user", 1, anthropic.ContentBlockParamUnion{OfToolResult: &r})
		case llm.RoleAssistant:
			blocks, err := m.assistantBlocks(msg, thinking)
			if err != nil {
				return "", nil, fmt.Errorf("message %d: %w", i, err)
			}
			add("assistant", 0, blocks...)
		default:
			return "", nil, fmt.Errorf("message %d: unsupported role %q", i, msg.Role)
		}
	}
	markTask(turns)
	out := make([]anthropic.MessageParam, 0, len(turns))
	for _, t := range turns {
		if t.role == "user" {
			out = append(out, anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: t.blocks}})
		} else {
			out = append(out, anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: t.blocks}})
		}
	}
	return strings.Join(system, "\n\n"), out, nil
}

// markTask puts the second cache breakpoint on the last text block of the
// first user message: the task, which stays the same for every call of a
// turn while the rest of the conversation grows.
func markTask(turns []*turn) {
	for _, t := range turns {
		if t.role != "user" {
			continue
		}
		for i := len(t.blocks) - 1; i >= 0; i-- {
			if tb := t.blocks[i].OfText; tb != nil {
				tb.CacheControl = anthropic.NewCacheControlEphemeralParam()
				return
			}
		}
		return
	}
}

// textBlocks is the content of a text message; the API refuses empty text
// blocks, so empty text is no block at all.
func textBlocks(s string) []anthropic.ContentBlockParamUnion {
	if s == "" {
		return nil
	}
	return []anthropic.ContentBlockParamUnion{{OfText: &anthropic.TextBlockParam{Text: s}}}
}

// assistantBlocks renders an assistant message: its text, then one
// tool_use block per call. With thinking on, the thinking blocks that
// preceded each call in the original response go back in front of it: the
// API requires them (signature and all) in the last assistant turn of a
// tool loop, and llm.Message has no place to carry them.
func (m *model) assistantBlocks(msg llm.Message, thinking bool) ([]anthropic.ContentBlockParamUnion, error) {
	var blocks []anthropic.ContentBlockParamUnion
	if thinking && len(msg.ToolCalls) > 0 {
		blocks = append(blocks, m.thinking.recall(msg.ToolCalls[0].ID)...)
	}
	blocks = append(blocks, textBlocks(msg.Content)...)
	for i, c := range msg.ToolCalls {
		if c.ID == "" || c.Name == "" {
			return nil, fmt.Errorf("tool call %d has no id or name", i)
		}
		if thinking && i > 0 {
			blocks = append(blocks, m.thinking.recall(c.ID)...)
		}
		blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{
			ID:    c.ID,
			Name:  c.Name,
			Input: toolInput(c.Arguments),
		}})
	}
	return blocks, nil
}

// toolInput is the `input` object of a tool_use block. Arguments are kept
// byte for byte when they are a JSON object, so the conversation prefix
// stays identical from call to call (and cacheable); anything else becomes
// {}, as MassGen does with arguments that do not parse.
func toolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	var obj map[string]json.RawMessage
	if strings.HasPrefix(trimmed, "{") && json.Unmarshal([]byte(trimmed), &obj) == nil {
		return json.RawMessage(trimmed)
	}
	return json.RawMessage(`{}`)
}

func tool(t llm.ToolDef) anthropic.ToolUnionParam {
	schema := maps.Clone(t.Parameters)
	if schema == nil {
		schema = map[string]any{"properties": map[string]any{}}
	}
	// input_schema must be an object schema; MassGen's tool definitions
	// sometimes leave the type out.
	if _, ok := schema["type"]; !ok {
		schema["type"] = "object"
	}
	tp := anthropic.ToolParam{
		Name: t.Name,
		// The schema goes out verbatim: the SDK's typed schema knows
		// only properties and required.
		InputSchema: param.Override[anthropic.ToolInputSchemaParam](schema),
	}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	return anthropic.ToolUnionParam{OfTool: &tp}
}

// flattenParams copies Request.Params into top-level body fields, without
// the reserved keys, with an `extra_body` map merged in. extra_body wins
// over a top-level key of the same name: it is the more specific
// instruction.
func flattenParams(params map[string]any) map[string]any {
	out := make(map[string]any, len(params))
	for k, v := range params {
		if k == "extra_body" || reservedParams[k] {
			continue
		}
		out[k] = v
	}
	for k, v := range mapEntries(params["extra_body"]) {
		if !reservedParams[k] {
			out[k] = v
		}
	}
	return out
}

// thinkingEnabled reports whether a `thinking` parameter asks for thinking
// blocks ({type: enabled|adaptive, …}).
func thinkingEnabled(v any) bool {
	for k, t := range mapEntries(v) {
		if k == "type" {
			s, _ := t.(string)
			return s != "" && s != "disabled"
		}
	}
	return false
}

// thinkingBudget is thinking.budget_tokens, or 0.
func thinkingBudget(v any) int64 {
	for k, b := range mapEntries(v) {
		if k == "budget_tokens" {
			n, _ := toInt(b)
			return n
		}
	}
	return 0
}

var errNotInteger = errors.New("not an integer")

// toInt reads an integer from whatever a YAML or JSON decoder produced.
func toInt(v any) (int64, error) {
	if n, ok := v.(json.Number); ok {
		return n.Int64()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if rv.Uint() > math.MaxInt64 {
			return 0, errNotInteger
		}
		return int64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, errNotInteger
		}
		return int64(f), nil
	}
	return 0, errNotInteger
}

// toStrings reads a list of strings (or one comma-separated string).
func toStrings(v any) ([]string, error) {
	if s, ok := v.(string); ok {
		var out []string
		for part := range strings.SplitSeq(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, fmt.Errorf("want a list of strings, got %T", v)
	}
	out := make([]string, 0, rv.Len())
	for i := range rv.Len() {
		s, ok := rv.Index(i).Interface().(string)
		if !ok {
			return nil, fmt.Errorf("want a list of strings, got %T in it", rv.Index(i).Interface())
		}
		out = append(out, s)
	}
	return out, nil
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

// imageBlocks are a tool's images as tool_result image blocks (base64
// source), after the text that describes them. The API takes only JPEG,
// PNG, GIF and WebP and refuses the whole request over any other type, so
// another type is left to the text description alone.
func imageBlocks(images []llm.Image) []anthropic.ToolResultBlockParamContentUnion {
	var out []anthropic.ToolResultBlockParamContentUnion
	for _, img := range images {
		switch img.MIME {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			continue
		}
		out = append(out, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
			Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
				Data:      base64.StdEncoding.EncodeToString(img.Data),
				MediaType: anthropic.Base64ImageSourceMediaType(img.MIME),
			}},
		}})
	}
	return out
}
