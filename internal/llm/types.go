package llm

import (
	"context"
	"iter"
)

// Role is who a message is from, in Chat Completions terms.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation.
type Message struct {
	Role    Role
	Content string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID ties a RoleTool message to the call it answers.
	ToolCallID string
	// IsError marks a RoleTool message as a failed call, for providers
	// that carry the flag (Anthropic's is_error); the text says it too.
	IsError bool
	// Images are pictures a tool returned (an MCP image result), for
	// RoleTool messages. Content still describes each one, so a provider
	// that cannot take images in a tool result still tells the model one
	// exists.
	Images []Image
}

// Image is one picture as raw bytes and its media type ("image/png").
type Image struct {
	MIME string
	Data []byte
}

// ToolCall is one complete function call made by the model. Adapters
// accumulate streamed argument fragments and emit a call only once it is whole.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // raw JSON text as the model produced it (may be malformed)
}

// ToolDef describes a function the model may call. Parameters is a JSON Schema object.
type ToolDef struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// Request is one call to a model.
type Request struct {
	Model    string
	Messages []Message
	Tools    []ToolDef
	// Params are provider parameters passed through verbatim (temperature,
	// top_p, max_tokens, extra_body…), as MassGen passes unknown backend keys.
	Params map[string]any
}

// ChunkKind says which field of a Chunk is set.
type ChunkKind int

const (
	ChunkText      ChunkKind = iota // Text holds a content delta
	ChunkReasoning                  // Text holds a reasoning delta
	ChunkToolCall                   // ToolCall holds one complete call
	ChunkUsage                      // Usage holds the token counts of the response
	ChunkDone                       // FinishReason holds why the response ended
	// ChunkToolArgs is a fragment of a tool call's arguments as they
	// stream: Text holds the fragment, ToolCall the call's ID and Name so
	// far (Arguments empty). It is for displays only: the complete call
	// still comes as a ChunkToolCall. Adapters whose wire sends calls
	// whole (Gemini) never yield it.
	ChunkToolArgs
)

func (k ChunkKind) String() string {
	switch k {
	case ChunkText:
		return "text"
	case ChunkReasoning:
		return "reasoning"
	case ChunkToolCall:
		return "tool_call"
	case ChunkUsage:
		return "usage"
	case ChunkDone:
		return "done"
	case ChunkToolArgs:
		return "tool_args"
	}
	return "unknown"
}

// Chunk is one element of a model's streamed response.
type Chunk struct {
	Kind         ChunkKind
	Text         string
	ToolCall     *ToolCall
	Usage        *Usage
	FinishReason string
}

// Usage counts tokens for one response.
type Usage struct {
	InputTokens     int64 `json:"input_tokens"`
	OutputTokens    int64 `json:"output_tokens"`
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	CachedTokens    int64 `json:"cached_tokens,omitempty"`
	// CacheWriteTokens are input tokens written to a prompt cache (also
	// counted in InputTokens); providers like Anthropic bill them above the
	// input rate.
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.InputTokens += u2.InputTokens
	u.OutputTokens += u2.OutputTokens
	u.ReasoningTokens += u2.ReasoningTokens
	u.CachedTokens += u2.CachedTokens
	u.CacheWriteTokens += u2.CacheWriteTokens
}

// Total is input plus output tokens.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Model is the seam between massgen and a provider. Stream sends one request
// and yields the response as it arrives. The sequence ends after a ChunkDone
// or with a non-nil error (an *Error when the provider failed). Cancelling ctx
// must abort the underlying HTTP request at once: that is how a superseded
// turn stops burning tokens.
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error]
}
