package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/massgen/massgen/internal/llm"
)

// translator turns the GenerateContentResponses of one answer (possibly
// spread over several continuation requests) into llm.Chunks. Text, thought
// summaries and function calls go out as they arrive: Gemini sends each
// function call whole, in one part. Usage and the finish reason are held
// until the answer is over.
type translator struct {
	calls    int        // function calls emitted so far
	usage    *llm.Usage // latest usage of the current request
	previous llm.Usage  // summed usage of earlier continuation requests
	finish   genai.FinishReason
	blocked  bool   // the prompt was refused (promptFeedback.blockReason)
	token    []byte // continuation token of the current request
}

// add takes one streamed response and returns the chunks to yield now.
func (t *translator) add(r *genai.GenerateContentResponse) []llm.Chunk {
	if r == nil {
		return nil
	}
	// Each chunk's usage is the running total of its request, so the last
	// one counts (within a request; requests of a continuation add up).
	if r.UsageMetadata != nil {
		u := usage(r.UsageMetadata)
		t.usage = &u
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		t.blocked = true
	}
	var out []llm.Chunk
	for _, c := range r.Candidates {
		// Only the first candidate is ours: massgen never asks for more.
		if c == nil || c.Index != 0 {
			continue
		}
		if c.Content != nil {
			for _, p := range c.Content.Parts {
				out = t.part(out, p)
			}
		}
		if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
			t.finish = c.FinishReason
		}
		if len(c.ContinuationToken) > 0 {
			t.token = c.ContinuationToken
		}
	}
	return out
}

// part translates one content part.
func (t *translator) part(out []llm.Chunk, p *genai.Part) []llm.Chunk {
	switch {
	case p == nil:
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		t.calls++
		id := fc.ID
		if id == "" {
			id = newCallID()
		}
		args := []byte("{}")
		if len(fc.Args) > 0 {
			// Args came out of JSON, so they go back into it.
			args, _ = json.Marshal(fc.Args)
		}
		if len(p.ThoughtSignature) > 0 {
			signatures.put(id, fc.Name, p.ThoughtSignature)
		}
		out = append(out, llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: id, Name: fc.Name, Arguments: string(args)}})
	case p.Thought:
		// A thought part may carry only a signature and no text.
		if p.Text != "" {
			out = append(out, llm.Chunk{Kind: llm.ChunkReasoning, Text: p.Text})
		}
	case p.Text != "":
		out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: p.Text})
	case p.ExecutableCode != nil:
		// Code the model ran with the code-execution tool: shown as part
		// of the answer, as Gemini's own UIs do.
		lang := strings.ToLower(string(p.ExecutableCode.Language))
		if lang == "" || lang == "language_unspecified" {
			lang = "python"
		}
		out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: fmt.Sprintf("\n```%s\n%s\n```\n", lang, strings.TrimRight(p.ExecutableCode.Code, "\n"))})
	case p.CodeExecutionResult != nil:
		if o := strings.TrimRight(p.CodeExecutionResult.Output, "\n"); o != "" {
			out = append(out, llm.Chunk{Kind: llm.ChunkText, Text: fmt.Sprintf("\n```\n%s\n```\n", o)})
		}
	}
	return out
}

// finished reports whether the answer said why it ended.
func (t *translator) finished() bool {
	return t.blocked || (t.finish != "" && t.finish != genai.FinishReasonContinuation)
}

// continuation returns the token to resume the answer with when the API
// ended this request with finish reason CONTINUATION, and makes the
// translator ready for the next request. It returns nil otherwise.
func (t *translator) continuation() []byte {
	if t.finish != genai.FinishReasonContinuation || len(t.token) == 0 || t.blocked {
		return nil
	}
	token := t.token
	if t.usage != nil {
		t.previous.Add(*t.usage)
	}
	t.usage, t.finish, t.token = nil, "", nil
	return token
}

// final returns the held chunks: usage, then done.
func (t *translator) final() []llm.Chunk {
	var out []llm.Chunk
	if t.usage != nil || t.previous != (llm.Usage{}) {
		u := t.previous
		if t.usage != nil {
			u.Add(*t.usage)
		}
		out = append(out, llm.Chunk{Kind: llm.ChunkUsage, Usage: &u})
	}
	return append(out, llm.Chunk{Kind: llm.ChunkDone, FinishReason: t.finishReason()})
}

// finishReason maps Gemini's finish reasons onto the Chat Completions words
// the rest of massgen speaks: stop, tool_calls, length, content_filter.
// Reasons without an equivalent (MALFORMED_FUNCTION_CALL, OTHER, …) are
// passed on in lower case.
func (t *translator) finishReason() string {
	if t.blocked && (t.finish == "" || t.finish == genai.FinishReasonUnspecified) {
		return "content_filter"
	}
	switch t.finish {
	case genai.FinishReasonStop:
		if t.calls > 0 {
			return "tool_calls"
		}
		return "stop"
	case genai.FinishReasonMaxTokens:
		return "length"
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return "content_filter"
	}
	return strings.ToLower(string(t.finish))
}

// usage converts Gemini's counts to massgen's. Gemini counts thinking
// (thoughtsTokenCount) apart from candidatesTokenCount and tool-use prompt
// tokens apart from promptTokenCount; both are billed, so they are added in:
// output includes reasoning and input includes cached tokens, as with every
// other provider, and Input+Output equals Gemini's totalTokenCount.
func usage(u *genai.GenerateContentResponseUsageMetadata) llm.Usage {
	return llm.Usage{
		InputTokens:     int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount),
		OutputTokens:    int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
		ReasoningTokens: int64(u.ThoughtsTokenCount),
		CachedTokens:    int64(u.CachedContentTokenCount),
	}
}
