package openai

import (
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llm"
)

// accumulator turns the events of one streamed response into llm.Chunks.
//
// Text, refusal and reasoning deltas go out as they arrive. A function call
// is assembled from output_item.added (call id, name), the argument deltas
// and function_call_arguments.done, and goes out once its output_item.done
// arrives. Usage and the finish reason come with the terminal event.
//
// Items that arrive whole, without deltas (as some servers and proxies send
// them, in output_item.done or only in the final response), are still
// yielded, once: what was already streamed for an item is never repeated.
type accumulator struct {
	calls    map[string]*pendingCall // function calls by item, in progress
	emitted  map[string]bool         // items whose content went out
	nCalls   int
	lastPart string // reasoning part of the last reasoning delta
	finish   string // set by the terminal event
}

// pendingCall is a function call being assembled. Its arguments grow in a
// builder: appending each delta to a string would copy the arguments so
// far every time, quadratic in a long answer.
type pendingCall struct {
	call llm.ToolCall
	args strings.Builder
}

// eventFailure is a failure the stream itself reported: response.failed or
// an `error` event.
type eventFailure struct {
	code, kind, message string
	failed              bool // response.failed rather than an error event
}

// itemKey names an output item. OpenAI gives every item an id; a server
// that does not is still consistent about output_index.
func itemKey(id string, outputIndex int64) string {
	if id != "" {
		return id
	}
	return "#" + strconv.FormatInt(outputIndex, 10)
}

// add takes one event and returns the chunks to yield now, or the failure
// the event reports.
func (a *accumulator) add(ev responses.ResponseStreamEventUnion) ([]llm.Chunk, *eventFailure) {
	if a.calls == nil {
		a.calls = map[string]*pendingCall{}
		a.emitted = map[string]bool{}
	}
	key := itemKey(ev.ItemID, ev.OutputIndex)
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		a.emitted[key] = true
		return text(ev.Delta), nil
	case "response.reasoning_summary_text.delta":
		a.emitted[key] = true
		return a.reasoning(key+"/summary/"+strconv.FormatInt(ev.SummaryIndex, 10), ev.Delta), nil
	case "response.reasoning_text.delta":
		a.emitted[key] = true
		return a.reasoning(key+"/content/"+strconv.FormatInt(ev.ContentIndex, 10), ev.Delta), nil

	case "response.output_item.added":
		it := ev.Item
		if it.Type == "function_call" {
			p := &pendingCall{call: llm.ToolCall{ID: it.CallID, Name: it.Name}}
			p.args.WriteString(it.Arguments.OfString)
			a.calls[itemKey(it.ID, ev.OutputIndex)] = p
		}
	case "response.function_call_arguments.delta":
		p := a.call(key)
		p.args.WriteString(ev.Delta)
		if ev.Delta != "" {
			return []llm.Chunk{{Kind: llm.ChunkToolArgs, Text: ev.Delta, ToolCall: &llm.ToolCall{ID: p.call.ID, Name: p.call.Name}}}, nil
		}
	case "response.function_call_arguments.done":
		// The whole text: it replaces the deltas rather than adds to them.
		if ev.JSON.Arguments.Valid() {
			p := a.call(key)
			p.args.Reset()
			p.args.WriteString(ev.Arguments)
		}
	case "response.output_item.done":
		return a.item(ev.Item, ev.OutputIndex), nil

	case "response.completed", "response.incomplete":
		return a.complete(ev.Response), nil
	case "response.failed":
		e := ev.Response.Error
		return nil, &eventFailure{code: string(e.Code), kind: e.Type, message: e.Message, failed: true}
	case "error":
		return nil, &eventFailure{code: ev.Code, message: ev.Message}
	}
	return nil, nil
}

// call returns the function call in progress for an item, creating it when
// its output_item.added was not seen.
func (a *accumulator) call(key string) *pendingCall {
	p := a.calls[key]
	if p == nil {
		p = &pendingCall{}
		a.calls[key] = p
	}
	return p
}

// item handles an output item that is done: a function call goes out now;
// a message or reasoning item goes out whole if none of it was streamed.
func (a *accumulator) item(it responses.ResponseOutputItemUnion, outputIndex int64) []llm.Chunk {
	key := itemKey(it.ID, outputIndex)
	if a.emitted[key] {
		return nil
	}
	switch it.Type {
	case "function_call":
		p := a.call(key)
		c := &p.call
		// The finished item is authoritative; what was assembled from the
		// deltas fills in whatever it leaves out.
		if it.CallID != "" {
			c.ID = it.CallID
		}
		if it.Name != "" {
			c.Name = it.Name
		}
		c.Arguments = p.args.String()
		if it.Arguments.OfString != "" {
			c.Arguments = it.Arguments.OfString
		}
		delete(a.calls, key)
		a.emitted[key] = true
		a.nCalls++
		return []llm.Chunk{{Kind: llm.ChunkToolCall, ToolCall: c}}
	case "message":
		a.emitted[key] = true
		var out []llm.Chunk
		for _, part := range it.Content {
			out = append(out, text(part.Text)...)
			out = append(out, text(part.Refusal)...)
		}
		return out
	case "reasoning":
		a.emitted[key] = true
		var out []llm.Chunk
		for i, s := range it.Summary {
			out = append(out, a.reasoning(key+"/summary/"+strconv.Itoa(i), s.Text)...)
		}
		for i, part := range it.Content {
			out = append(out, a.reasoning(key+"/content/"+strconv.Itoa(i), part.Text)...)
		}
		return out
	}
	return nil
}

// complete handles the terminal event: whatever the stream left out, then
// usage and the finish reason.
func (a *accumulator) complete(r responses.Response) []llm.Chunk {
	var out []llm.Chunk
	for i, it := range r.Output {
		out = append(out, a.item(it, int64(i))...)
	}
	if r.JSON.Usage.Valid() {
		u := r.Usage
		out = append(out, llm.Chunk{Kind: llm.ChunkUsage, Usage: &llm.Usage{
			InputTokens:     u.InputTokens,
			OutputTokens:    u.OutputTokens,
			ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
			CachedTokens:    u.InputTokensDetails.CachedTokens,
		}})
	}
	a.finish = "stop"
	if a.nCalls > 0 {
		a.finish = "tool_calls"
	}
	if r.Status == responses.ResponseStatusIncomplete {
		switch reason := r.IncompleteDetails.Reason; reason {
		case "max_output_tokens", "":
			a.finish = "length"
		default:
			a.finish = reason // content_filter, …
		}
	}
	return append(out, llm.Chunk{Kind: llm.ChunkDone, FinishReason: a.finish})
}

// finished reports whether the terminal event was seen.
func (a *accumulator) finished() bool { return a.finish != "" }

// reasoning yields a reasoning delta. Reasoning arrives in parts (summary
// paragraphs, several reasoning items); the parts are separated by a blank
// line so that they do not run into each other on screen.
func (a *accumulator) reasoning(part, delta string) []llm.Chunk {
	if delta == "" {
		return nil
	}
	if a.lastPart != "" && a.lastPart != part {
		delta = "\n\n" + delta
	}
	a.lastPart = part
	return []llm.Chunk{{Kind: llm.ChunkReasoning, Text: delta}}
}

func text(s string) []llm.Chunk {
	if s == "" {
		return nil
	}
	return []llm.Chunk{{Kind: llm.ChunkText, Text: s}}
}
