// Package llmsim is a simulated LLM provider: a real HTTP server that speaks
// the wire formats of four provider APIs, so that the adapter of each, and
// every layer above it — agents, the orchestrator, the CLI — runs end to end
// without an API key or a network. It is what backend `type: sim` and
// `massgen sim serve` run.
//
// # Endpoints
//
// One server, one scenario, one step queue and answer counter per model
// name, one request log: a model's steps are consumed in arrival order
// whatever wire its requests use, and Record.Wire says which one it was.
//
//   - OpenAI Chat Completions: POST /v1/chat/completions (streaming SSE with
//     chat.completion.chunk events and data: [DONE], or a chat.completion),
//     plus GET /v1/models and /v1/models/{id}. Errors in OpenAI's shape.
//   - OpenAI Responses: POST /v1/responses. Reads instructions, input (a
//     string or items: messages with string or input_text content,
//     function_call, function_call_output) and function tools. Streams
//     response.created, response.in_progress, then for the text a message
//     item (response.output_item.added, response.content_part.added,
//     response.output_text.delta..., response.output_text.done,
//     response.content_part.done, response.output_item.done) and per tool
//     call a function_call item (response.output_item.added,
//     response.function_call_arguments.delta..., .done,
//     response.output_item.done), then response.completed with usage
//     (input_tokens, output_tokens, total_tokens and their details); or
//     returns the Response. Errors in OpenAI's shape.
//   - Anthropic Messages: POST /v1/messages. Reads system (string or text
//     blocks), messages (string or blocks: text, tool_use, tool_result) and
//     tools (name, input_schema); like the real API it rejects a request
//     without model, max_tokens or messages. <system-reminder> sections
//     in a user's text (Claude Code's own context) are not the user's
//     words and are left out. Streams message_start (with
//     usage.input_tokens), ping, per block content_block_start, deltas
//     (text_delta; input_json_delta for tool_use blocks, IDs toolu_sim...)
//     and content_block_stop, then message_delta (stop_reason end_turn or
//     tool_use, usage.output_tokens) and message_stop; or returns the
//     Message. Errors as {"type":"error","error":{"type":...,"message":...}}
//     (rate_limit_error, api_error, authentication_error, overloaded_error,
//     ...), with a request-id header.
//   - Gemini: POST /v1beta/models/{model}:streamGenerateContent?alt=sse and
//     :generateContent (also under /v1/); the model is the one in the path.
//     Reads systemInstruction, contents (roles user and model; text,
//     functionCall and functionResponse parts) and
//     tools[].functionDeclarations (parameters or parametersJsonSchema).
//     Streams GenerateContentResponse chunks: one per text fragment, one per
//     function call (sent whole, args an object, when its last token is
//     due), each with usageMetadata so far, the last with finishReason STOP;
//     or returns one response. Errors as {"error":{"code","message",
//     "status"}} (RESOURCE_EXHAUSTED, INTERNAL, UNAUTHENTICATED, ...), with
//     a google.rpc.RetryInfo detail when a retry delay is scripted. A
//     request for JSON output (generationConfig.responseMimeType
//     application/json with responseJsonSchema or responseSchema, as Gemini
//     CLI's model router sends) gets an instance of the schema instead of a
//     text that is not JSON. POST …/models/{model}:countTokens answers the
//     prompt estimate ({"totalTokens"}), unrecorded.
//
// Start returns the OpenAI base URL ("http://host:port/v1"); the Anthropic
// and Gemini SDKs add their version themselves and take it without "/v1".
// Every request's conversation is recorded in Chat Completions terms (see
// Message), so tests read the log the same way whatever the wire.
//
// # Using it in a test
//
//	sim := llmsim.New(nil) // nil scenario: default policy for every model
//	baseURL, err := sim.Start("127.0.0.1:0")
//	if err != nil { t.Fatal(err) }
//	defer sim.Close()      // aborts in-flight streams; leaves no goroutine behind
//	client := openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("sim"),
//		option.WithMaxRetries(0))
//	claude := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(),
//		aoption.WithBaseURL(strings.TrimSuffix(baseURL, "/v1")), aoption.WithAPIKey("sim"),
//		aoption.WithMaxRetries(0))
//	gemini, _ := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "sim",
//		Backend: genai.BackendGeminiAPI,
//		HTTPOptions: genai.HTTPOptions{BaseURL: strings.TrimSuffix(baseURL, "/v1")}})
//	// ... run the code under test against the simulator ...
//	recs := sim.Requests() // what was asked, what the simulator decided, timings
//
// To wait for something to happen on the wire (a request to arrive, a stream
// to start) rather than sleeping, use WaitFor:
//
//	err := sim.WaitFor(ctx, func(rs []llmsim.Record) bool {
//		return len(rs) > 0 && !rs[0].FirstByte.IsZero()
//	})
//
// # Default policy
//
// Without a script, each request is answered from the tools it offers, which
// is enough to run any MassGen configuration to consensus:
//
//   - vote offered: vote{agent_id: first value of the agent_id enum,
//     reason: "simulated vote: <label> is complete"};
//   - else new_answer offered: new_answer{content: "[sim model M] Answer N to:
//     <task>. <~48 words>"}, N counting the model's answers from 1. The task
//     is the start of <ORIGINAL MESSAGE> in the last user message (or that
//     message). The words are drawn deterministically from (model, N), so
//     answers of different models are far apart by word-set Jaccard and a
//     novelty check does not reject them;
//   - else submit offered: submit{confirmed: true};
//   - else (no workflow tool: final presentation or a plain chat): text. The
//     model's Final if scripted, else "[sim model M] Final answer: " plus the
//     answer the prompt marks as "(YOUR ANSWER)", or the first
//     <agentN>...<end of agentN> block, or a paragraph of its own.
//
// Everything is deterministic: the same requests in the same order per model
// get the same responses.
//
// # Scenarios
//
// A scenario scripts models by name. Steps are consumed one per request to
// that model, in arrival order; when they run out the default policy
// applies. Settings fall back from the model's entry to "*" to defaults.
//
//	defaults:
//	  ttft_ms: 50              # time to first token
//	  tokens_per_second: 200   # 0 or absent: as fast as possible
//	models:
//	  gpt-a:
//	    steps:
//	      - answer: "Paris is the capital of France."
//	      - fault: "429"         # any HTTP status 400-599
//	        retry_after: 1.5     # seconds: retry-after header
//	      - vote: agent1
//	        reason: "agent1 is right"
//	    final: "Paris."          # the presentation, when no step applies
//	  gpt-b:
//	    answer: "[{model}] take {n}"   # default-policy answer text template
//	    steps:
//	      - fault: cut                 # stream dies half-way, no [DONE]
//	      - text: "thinking aloud"     # no tool call at all
//	      - when: presentation         # waits for a request without tools
//	        text: "B presents."
//	      - calls:                      # several tool calls in one response
//	          - {name: vote, arguments: '{"agent_id":"agent1","reason":"x"}'}
//	          - {name: new_answer, arguments: '{"content":"y"}'}
//	  broken:
//	    always: {fault: "401"}   # every request, never consumed
//
// Faults work on every wire: an HTTP status ("429", "500", "401", ...; the
// wire's error body, and retry-after and retry-after-ms when retry_after is
// set); "cut" (about half the response, then the connection drops without
// the closing events: [DONE], response.completed, message_stop, the chunk
// with finishReason); "malformed_tool_json" (new_answer with arguments that
// are not JSON: sent as they are by Chat Completions and Responses and in
// Anthropic's input_json_delta fragments; a non-streamed Anthropic tool_use
// carries them as a JSON string, since its input must be an object; Gemini,
// which can only send an args object, ends the candidate with finishReason
// MALFORMED_FUNCTION_CALL and a finishMessage, as the real API does for a
// garbled call); "no_tool_call" (plain text although tools are offered);
// "hang" (headers and the opening events — role chunk, response.created
// and response.in_progress, message_start; nothing for Gemini — then
// nothing until the client cancels or the server closes).
//
// A model scripted with ignore_tools: true is blind to tools, as a chat
// template without tool support is (SmolLM2's under llama.cpp): its
// requests are planned and recorded as if they offered none, and GET
// /props?model=NAME (llama.cpp's endpoint) says supports_tool_calls:
// false. A Chat Completions request with response_format json_schema gets
// an instance of the schema (schemaInstance) in place of a text that is
// not JSON, as a server that turns the schema into a grammar gives, and
// its Record says JSONSchema.
//
// A step's when ("coordination": the request offers new_answer;
// "presentation": no tools; "evaluation": submit/restart_orchestration
// without new_answer) keeps it queued until a matching request comes; only
// the head of the queue is looked at, and a request it does not match gets
// the default policy.
//
// # Scripting tool calls
//
// A step's calls make the model call any tools, several at once if listed
// together; the next step's expect_results checks what the client sent back
// for them before that step's action goes out:
//
//	models:
//	  tool-model:
//	    steps:
//	      - calls:                              # the model calls two tools at once
//	          - {name: add, arguments: '{"a":2,"b":3}'}
//	          - {name: lookup, arguments: '{"country":"France"}'}
//	      - expect_results:                     # what the client must send back
//	          - {name: add, contains: "5"}
//	          - {name: lookup, contains: "Paris"}
//	        answer: "5, and Paris."             # then the step's action
//
// The results checked are those after the last assistant message of the
// request: Chat Completions tool messages, Responses function_call_output
// items, Anthropic tool_result blocks, Gemini functionResponse parts (whose
// response object's string values are searched too), each named after the
// call it answers. An expectation names the function (name; "" = any) and
// a text the result must contain (contains; "" = any); each result meets at
// most one expectation. When one is not met the request is refused with a
// 400 in the wire's error shape, its message starting "llmsim: expected a
// tool result of ...", and its Record says Outcome "rejected" and why in
// Problem: a test sees the mismatch as the turn's error and in the log.
//
// # Wire shape and pacing
//
// Streams have the shapes of the real providers' (see the recordings under
// reference/provider-recordings; the tests compare them). Chat Completions:
// chat.completion.chunk events, the first delta carrying the role, each tool
// call opened by a chunk with index, id, type and name and continued by
// argument fragments, a finish_reason chunk ("stop" or "tool_calls"), a
// usage chunk with empty choices when stream_options.include_usage is set,
// then data: [DONE]. IDs are derived from the request's log ID
// (chatcmpl-sim000001, call_sim000001_0; resp_sim000001, msg_sim000001,
// fc_sim000001_0; toolu_sim000001_0).
//
// Each request is decoded into a wire-neutral form (model, stream, tools
// offered, vote enum, messages, a prompt-token estimate: about a token per
// four characters of the conversation), the policy makes one plan from it,
// and the wire's encoder renders that plan, so every wire gets the same
// steps, texts, timing and token counts. Headers are sent at once; the
// opening events and the first token follow after TTFT; then tokens (about
// four characters each, of the text and of each tool call's argument JSON,
// plus one per tool call) at tokens_per_second, one per event at modest
// rates and batched at high or unlimited rates. A non-streaming response
// arrives after the whole generation time. Usage reports the prompt estimate
// and the tokens sent. Every wait watches the request's context: a client
// that cancels ends the exchange at once and its Record says "cancelled",
// with End at that moment.
package llmsim
