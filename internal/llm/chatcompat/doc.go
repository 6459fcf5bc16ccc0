// Package chatcompat is the llm.Model adapter for the OpenAI Chat Completions
// wire API and every server that imitates it: Groq, OpenRouter, xAI, Z.ai,
// Together, Fireworks, Cerebras, vLLM, SGLang, LM Studio, llama.cpp, Ollama,
// and massgen's own simulator.
//
// It talks through the official openai-go SDK and adds what the compatible
// family needs on top of it:
//
//   - reasoning text, which these servers stream in a `reasoning_content` or
//     `reasoning` field the SDK does not model, is read from the raw JSON;
//   - tool-call fragments are accumulated by index and yielded only once each
//     call is whole, after the response has finished;
//   - a stream that stops without a finish reason and without `[DONE]` is a
//     failure (a cut connection), not a short answer;
//   - every failure becomes an *llm.Error (status, retryability, retry-after,
//     the provider's own message), except cancellation, which stays a
//     context error so callers can tell "stopped" from "broken".
//
// A typical use:
//
//	m := chatcompat.New(chatcompat.Options{
//		Provider: "groq",
//		BaseURL:  "https://api.groq.com/openai/v1",
//		APIKey:   os.Getenv("GROQ_API_KEY"),
//		Model:    "moonshotai/kimi-k2-instruct-0905",
//		Stream:   true,
//	})
//	for c, err := range m.Stream(ctx, &llm.Request{Messages: msgs}) {
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
// has already been shown to the user.
//
// This package imports llm and the openai-go SDK, never anything else from
// massgen.
package chatcompat
