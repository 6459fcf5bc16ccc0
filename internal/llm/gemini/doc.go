// Package gemini is the llm.Model adapter for Google's Gemini API
// (generativelanguage.googleapis.com), through the official
// google.golang.org/genai SDK. It always streams
// (models/{model}:streamGenerateContent?alt=sse).
//
// A typical use:
//
//	m := gemini.New(gemini.Options{
//		APIKey: os.Getenv("GEMINI_API_KEY"),
//		Model:  "gemini-2.5-flash",
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
// # How the neutral request maps onto Gemini
//
//   - System messages (wherever they stand) become the systemInstruction;
//     user messages are "user" contents; assistant messages are "model"
//     contents with a text part and one functionCall part per tool call
//     (args = the parsed Arguments, id = the call id); tool results are
//     functionResponse parts (name looked up from the assistant call with
//     the same id; response = the result when it is a JSON object, else
//     {"content": text}), consecutive results sharing one "user" content.
//     Messages with nothing to send are left out: the API rejects empty
//     contents.
//   - Tools become one Tool of functionDeclarations whose
//     parametersJsonSchema is the JSON Schema as given.
//   - Thought signatures that Gemini attaches to function calls are
//     remembered by call id (process-wide) and sent back with the call, as
//     Gemini 3 requires; a call whose signature this process never saw gets
//     Google's documented placeholder on models that enforce signatures. See
//     signatures.go.
//
// # How the response maps onto chunks
//
// Text parts are ChunkText and thought parts (sent when include_thoughts is
// on) ChunkReasoning, as they arrive. A functionCall part is one complete
// ChunkToolCall at once (Gemini does not split calls); its id is the API's,
// or a process-unique "call_<n>" when the API gives none (Gemini 2.x).
// Code run by the code-execution tool and its output are shown as fenced
// text. At the end come ChunkUsage (from the last usageMetadata: input =
// prompt + tool-use prompt tokens, output = candidates + thoughts tokens,
// reasoning = thoughts, cached = cachedContent) and ChunkDone with the
// finish reason in Chat Completions words: STOP → "stop" ("tool_calls" when
// a function call was emitted), MAX_TOKENS → "length", SAFETY, RECITATION,
// BLOCKLIST, PROHIBITED_CONTENT, SPII and a blocked prompt →
// "content_filter", anything else in lower case. When the API ends a stream
// with finish reason CONTINUATION, the adapter sends the continuation
// request itself and the answer goes on seamlessly (usage summed).
//
// # Params
//
// Request.Params keys this adapter understands (anything else is ignored):
//
//	temperature, top_p, top_k,
//	presence_penalty, frequency_penalty          number
//	max_tokens, max_completion_tokens,
//	max_output_tokens                            whole number → maxOutputTokens
//	seed                                         whole number
//	stop, stop_sequences                         string or list of strings
//	response_mime_type                           string
//	response_schema, response_json_schema        JSON Schema → responseJsonSchema
//	                                             (mime type defaults to application/json)
//	thinking_config                              map: include_thoughts, thinking_budget,
//	                                             thinking_level (snake or camel case)
//	include_thoughts                             bool   (wins over thinking_config)
//	thinking_budget                              whole number (-1 dynamic, 0 off)
//	thinking_level                               "minimal", "low", "medium", "high"
//	enable_web_search                            bool → the google_search tool
//	enable_code_execution                        bool → the code_execution tool
//	extra_body                                   map merged into the REST body as is
//	                                             (camelCase wire names)
//
// A known key with a value of the wrong type fails the request with a final
// *llm.Error rather than being dropped.
//
// # Failures
//
// Every failure is an *llm.Error except cancellation, which wraps ctx.Err().
// HTTP errors carry the status and Google's message; 408, 409, 429 and 5xx
// are retryable, with the wait taken from a google.rpc.RetryInfo detail
// ("retryDelay": "12s") or a Retry-After header. An error event inside a
// 200 stream, a cut connection and a stream that ends without a finish
// reason are retryable with Status 0; an unreachable host is Status 0,
// retryable, "cannot reach <base URL>: <cause>".
//
// # The SDK, tamed
//
// Retries are not done here: the SDK's HTTP retries stay off and its
// automatic continuation (which also re-sends a request after a dropped
// connection) is disabled; llm.WithRetry wraps the model, because only the
// caller knows whether a chunk has already been shown.
//
// The process has one genai client, built on first use, whatever the number
// of models: each request carries its model's base URL, API version and
// headers (HTTPOptions) and its HTTP client and key (the request context, read
// by the client's transport). The backend, a key and the base URL are always
// given explicitly, so GOOGLE_API_KEY, GEMINI_API_KEY,
// GOOGLE_GENAI_USE_VERTEXAI and GOOGLE_GEMINI_BASE_URL never reach a request;
// an empty Options.APIKey sends no key at all. (Building that client still
// logs one warning through the standard logger when both GOOGLE_API_KEY and
// GEMINI_API_KEY are set; the SDK offers no way around it.) The transport
// also keeps error bodies and broken-stream causes, which the SDK would
// otherwise flatten or write to the standard logger.
//
// This package imports llm and the genai SDK, never anything else from
// massgen.
package gemini
