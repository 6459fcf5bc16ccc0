package server

import (
	"fmt"

	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/llm"
)

// The response shapes of the OpenAI API that the server writes.

type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"` // "chat.completion"
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   wireUsage          `json:"usage"`
	Massgen *massgenInfo       `json:"massgen,omitempty"`
}

type completionChoice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
	Logprobs     *struct{}       `json:"logprobs"`
}

type responseMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireUsage struct {
	PromptTokens            int64                `json:"prompt_tokens"`
	CompletionTokens        int64                `json:"completion_tokens"`
	TotalTokens             int64                `json:"total_tokens"`
	PromptTokensDetails     *promptTokensDetails `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *completionDetails   `json:"completion_tokens_details,omitempty"`
}

type promptTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type completionDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

func usageOf(u llm.Usage) wireUsage {
	w := wireUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	if u.CachedTokens > 0 {
		w.PromptTokensDetails = &promptTokensDetails{CachedTokens: u.CachedTokens}
	}
	if u.ReasoningTokens > 0 {
		w.CompletionTokensDetails = &completionDetails{ReasoningTokens: u.ReasoningTokens}
	}
	return w
}

// massgenInfo is the `massgen` extension object of a completion (and of
// the finishing chunk of a stream). Clients that do not know it ignore it.
type massgenInfo struct {
	RunID  string          `json:"run_id"`
	Winner string          `json:"winner,omitempty"`
	Status coord.RunStatus `json:"status"`
	LogDir string          `json:"log_dir,omitempty"`
	// From the run's view: the winner's tally (real id → votes), the
	// answers accepted in the whole run, and the run's cost where the
	// models are priced.
	Votes   map[string]int `json:"votes,omitempty"`
	Answers int            `json:"answers,omitempty"`
	CostUSD float64        `json:"cost_usd,omitempty"`
	// Fallback notes that the answer is the winner's stored answer, and
	// why; GraceExpired that its presentation ran out of time.
	Fallback     string `json:"fallback,omitempty"`
	GraceExpired bool   `json:"grace_expired,omitempty"`
	// Notes say what of the request the run left out (tools the team
	// cannot call), so that a client may tell why it was not used.
	Notes []string `json:"notes,omitempty"`
}

type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"` // "chat.completion.chunk"
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *wireUsage    `json:"usage,omitempty"`
	Massgen *massgenInfo  `json:"massgen,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "model"
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type modelList struct {
	Object string        `json:"object"` // "list"
	Data   []modelObject `json:"data"`
}

func wireCalls(calls []llm.ToolCall, withIndex bool) []wireToolCall {
	out := make([]wireToolCall, len(calls))
	for i, c := range calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out[i] = wireToolCall{ID: id, Type: "function"}
		out[i].Function.Name, out[i].Function.Arguments = c.Name, c.Arguments
		if withIndex {
			out[i].Index = &i
		}
	}
	return out
}
