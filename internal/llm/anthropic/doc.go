// Package anthropic is the llm.Model adapter for the Anthropic Messages API
// (massgen's `claude` backend), on the official anthropic-sdk-go.
//
// It always streams, and maps the provider-neutral request onto the
// Messages wire format:
//
//   - system messages become the top-level `system` parameter (joined by a
//     blank line);
//   - an assistant message becomes text plus one `tool_use` block per call,
//     its `input` the call's JSON arguments ({} when they do not parse);
//   - tool results become `tool_result` blocks inside a user message, and
//     consecutive results share one message, as the API requires;
//   - tools become tool definitions whose `input_schema` is the JSON schema
//     as given;
//   - two prompt-cache breakpoints mark the stable prefix of every call of a
//     turn: the system prompt, and the last text block of the first user
//     message (the task);
//   - Request.Params go into the body verbatim (temperature, top_p, top_k,
//     stop_sequences, thinking, tool_choice…), an `extra_body` map merged
//     in; `max_tokens` (default Options.MaxTokens, 8192) and `betas` (the
//     anthropic-beta header) are read rather than passed.
//
// The stream comes back as chunks: text_delta and thinking_delta as they
// arrive, each tool call whole when its content block stops, then usage
// (cache writes and reads counted in InputTokens, reads also in
// CachedTokens, thinking tokens in ReasoningTokens) and the stop reason
// (end_turn, tool_use, max_tokens…) as the finish reason.
//
// With extended thinking on, the API wants the signed thinking blocks of
// the last assistant turn back in a tool loop. llm.Message cannot carry
// them, so the model remembers them by tool-call id and restores them (see
// thinkingMemory): use one Model for the whole tool loop.
//
// A typical use:
//
//	m := anthropic.New(anthropic.Options{
//		APIKey: os.Getenv("ANTHROPIC_API_KEY"),
//		Model:  "claude-sonnet-4-5",
//	})
//	for c, err := range m.Stream(ctx, &llm.Request{Messages: msgs, Tools: tools}) {
//		if err != nil {
//			return err
//		}
//		switch c.Kind {
//		case llm.ChunkText:
//			fmt.Print(c.Text)
//		case llm.ChunkToolCall:
//			run(c.ToolCall)
//		}
//	}
//
// Failures are *llm.Error values (status, retryability, retry-after, the
// API's message); an error event inside the stream (overloaded_error is
// status 529) and a stream cut before its end are retryable. Cancellation
// stays a context error. Retries are not done here: the SDK's own are off
// and llm.WithRetry wraps the model. Nothing is read from the environment:
// the SDK's client constructor, which reads ANTHROPIC_* variables and
// profiles, is not used.
//
// This package imports llm and the Anthropic SDK, never anything else from
// massgen.
package anthropic
