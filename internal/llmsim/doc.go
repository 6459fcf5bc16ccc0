// Package llmsim is a simulated LLM provider: a real HTTP server that speaks
// the OpenAI Chat Completions wire format (POST /v1/chat/completions,
// streaming SSE and plain JSON, tool calls; GET /v1/models). Nothing here
// needs an API key or a network: it is how every layer above the wire — the
// chatcompat adapter, agents, the orchestrator, the CLI — is tested, and what
// backend `type: sim` and `massgen sim serve` run.
//
// # Using it in a test
//
//	sim := llmsim.New(nil) // nil scenario: default policy for every model
//	baseURL, err := sim.Start("127.0.0.1:0")
//	if err != nil { t.Fatal(err) }
//	defer sim.Close()      // aborts in-flight streams; leaves no goroutine behind
//	client := openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey("sim"),
//		option.WithMaxRetries(0))
//	// ... run the code under test against baseURL ...
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
// Faults: an HTTP status ("429", "500", "401", ...; OpenAI's error body, and
// retry-after when retry_after is set); "cut" (about half the response, then
// the connection drops without [DONE]); "malformed_tool_json" (new_answer
// with arguments that are not JSON); "no_tool_call" (plain text although
// tools are offered); "hang" (headers and the role chunk, then nothing until
// the client cancels or the server closes).
//
// A step's when ("coordination": the request offers new_answer;
// "presentation": no tools; "evaluation": submit/restart_orchestration
// without new_answer) keeps it queued until a matching request comes; only
// the head of the queue is looked at, and a request it does not match gets
// the default policy.
//
// # Wire shape and pacing
//
// Streams have the shape of OpenAI's (see the recordings under
// reference/provider-recordings): chat.completion.chunk events, the first
// delta carrying the role, each tool call opened by a chunk with index, id,
// type and name and continued by argument fragments, a finish_reason chunk
// ("stop" or "tool_calls"), a usage chunk with empty choices when
// stream_options.include_usage is set, then data: [DONE]. IDs are derived
// from the request's log ID (chatcmpl-sim000001, call_sim000001_0).
//
// Headers are sent at once; the role chunk and the first token follow after
// TTFT; then tokens (about four characters each) at tokens_per_second, one
// per event at modest rates and batched at high or unlimited rates. A
// non-streaming response arrives after the whole generation time. Every wait
// watches the request's context: a client that cancels ends the exchange at
// once and its Record says "cancelled", with End at that moment.
package llmsim
