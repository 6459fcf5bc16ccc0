// Package openai is the llm.Model adapter for OpenAI's Responses API
// (POST /v1/responses, streamed), the wire API of massgen's `openai` backend.
// Compatible servers that only speak Chat Completions use package chatcompat.
//
// It talks through the official openai-go SDK and adds what massgen needs on
// top of it:
//
//   - the conversation is sent whole on every request, with `store: false`:
//     no previous_response_id, no server-side state, so a request can be
//     retried, replayed or sent to another agent's model as it is;
//   - system messages become `instructions`, tool calls and tool results
//     become `function_call` and `function_call_output` input items;
//   - reasoning models are asked for reasoning summaries (and GPT-5.1/5.2 for
//     medium effort) unless the config says otherwise, so their thinking is
//     shown as reasoning; an organisation that may not have summaries gets
//     the request again without them;
//   - text, refusal and reasoning deltas are yielded as they arrive, a tool
//     call once its output item is done, usage and the finish reason when the
//     response completes;
//   - a stream that stops before `response.completed` is a failure (a cut
//     connection), not a short answer, and every failure becomes an
//     *llm.Error (status, retryability, retry-after, the provider's own
//     message), except cancellation, which stays a context error so callers
//     can tell "stopped" from "broken".
//
// A typical use:
//
//	m := openai.New(openai.Options{
//		APIKey: os.Getenv("OPENAI_API_KEY"),
//		Model:  "gpt-5",
//	})
//	req := &llm.Request{
//		Messages: msgs,
//		Params:   map[string]any{"reasoning": map[string]any{"effort": "high"}},
//	}
//	for c, err := range m.Stream(ctx, req) {
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
// Retries are not done here: the SDK's own retries are switched off and
// llm.WithRetry wraps the model, because only the caller knows whether a chunk
// has already been shown to the user. The one exception is the summary
// fallback above, which resends a request the server refused outright.
//
// This package imports llm and the openai-go SDK, never anything else from
// massgen, and never reads the process environment: keys and base URLs come
// in through Options.
package openai
