// Package server is massgen's OpenAI-compatible HTTP API (`massgen
// serve`): any OpenAI client can send a chat completion (or a Responses
// API request) and get the team's final answer, streamed while the run
// happens. It uses net/http only and
// knows nothing of configs or agents: the command line hands it a Runner
// that starts one orchestration per request.
//
// Routes (all in server.go):
//
//	GET  /health                 {"status":"ok","service":"massgen-server","version":…}; no API key needed
//	GET  /v1/models              "massgen" and "massgen/<name>" for each routed config
//	GET  /v1/models/{id}         one of them
//	POST /v1/chat/completions    one run per request, streaming or not
//	POST /v1/responses           the same, in the Responses API's shapes
//	GET  /v1/runs/{id}           the run's status.json (live while it runs)
//
// Model routing: "massgen" runs the server's default config, "massgen/<name>"
// the config Deps.Configs (or Deps.ConfigSource, asked per request) maps it to, and any other id a single agent on that
// model (the Runner answers 404 when it cannot tell the model's provider).
//
// Messages: the last user message is the question; earlier user and
// assistant messages are the conversation history every agent sees (tool
// calls and results in it are written out as text); system and developer
// messages are put before the question, separated by a blank line; tool
// calls and tool results after the last user message (a client returning
// the output of a tool the run asked for) are appended to the question.
// temperature, top_p and max_tokens (or max_completion_tokens) go to
// single-model runs (RunRequest.Params); a config's agents keep their own.
// Client function tools are offered to the winner's final presentation;
// when it calls them the response carries tool_calls and finish_reason
// "tool_calls". Tool names that collide with the workflow tools
// (ReservedTools) are rejected with 400.
//
// Streaming (stream: true) sends chat.completion.chunk objects as the run
// progresses: a role chunk when the run starts; one line per coordination
// step ("[critic] voted for researcher: …") as delta.reasoning_content,
// which ordinary clients ignore, and only before the answer's first token; the winner's final presentation as
// delta.content, token by token; then whatever the deltas missed (they may
// be dropped under back-pressure; the streamed text is reconciled with the
// stored final answer), tool_calls deltas if any, the finishing chunk with
// the `massgen` extension object, a usage chunk if
// stream_options.include_usage, and data: [DONE]. A run that fails or times
// out ends with a data: {"error": {…}} object (OpenAI's SDKs raise it) and
// [DONE]. A non-streaming run that fails gets 500, one that times out 504.
//
// Responses API (responses.go): the request is read into the same
// chatRequest — instructions as a system message, input items as
// messages, function_call and function_call_output items as tool calls
// and results, function tools flattened (a namespace's too) — so both APIs
// run alike. The run is written as a Response, or streamed as its events
// (responsesStream): progress lines as the summary of a reasoning item,
// the final answer as a message item's output_text deltas, client tool
// calls as function_call items, then response.completed; a run that fails
// ends with response.failed and an `error` event. A whole Response is built
// by the same code from the same events, so both have the same items. The
// Response echoes the request's settings.
//
// Kept responses (responses_store.go): each Response (its conversation
// and the object sent) is kept, unless the request says store: false, so
// that previous_response_id and item_reference input items resolve and
// GET /v1/responses/{id} returns it (DELETE forgets it; input_items.go
// lists its input items): in memory (bounded
// by count and bytes, least recently used first out) and, with
// Deps.Responses, in the sessions database (internal/store), written before
// the client has the answer, so that it outlives the process; memory is
// then the cache in front of it.
//
// Tools the team cannot call (hosted tools, custom tools) are left out
// with a note in the massgen object rather than refused. Structured output
// (schema.go): response_format / text.format reaches the final
// presentation (RunRequest.Output), and the final answer is checked
// against its JSON Schema (422 when it does not conform).
//
// Errors use OpenAI's shape {"error":{"message","type","param","code"}}:
// 400 bad request, 422 a final answer not in the format asked for, 401 bad or missing bearer token (when Deps.APIKey is
// set), 403 Host not allowed, 404 unknown model or route, 405, 408 body not
// received within Deps.BodyTimeout, 413 body too large, 415 a POST body not sent as application/json, 429 when every run
// slot and the wait queue are taken, 500, 503 while shutting down.
//
// Forged requests (hostcheck.go): every route refuses a Host header that is
// not a name of the server (loopback names, Deps.ListenHost, the machine's
// names and any IP when listening beyond loopback, Deps.AllowedHosts), so a
// DNS-rebound page gets 403; run routes refuse non-JSON content types, so
// a cross-site form or text/plain POST — sent without a CORS preflight —
// gets 415. The Host check comes first, before CORS and the API key; both
// apply with an API key too, and neither lets a refused request start a run.
//
// CORS: a request whose Origin is in Deps.CORSOrigins (or any, with "*")
// gets Access-Control-Allow-Origin; its preflight (OPTIONS) is answered
// with 204 before the API key check, as browsers send it without one.
//
// Concurrency: at most Deps.MaxConcurrent runs at once; up to Deps.MaxQueue
// more wait in FIFO order (a waiter whose client disconnects leaves the
// queue). A client that disconnects mid-run cancels its run at once: the
// request context is the run's context, so every model request is
// aborted. Shutdown turns new requests away with 503, gives runs in flight
// a grace period, then cancels them.
package server
