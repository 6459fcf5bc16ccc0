// Package toolless lets a model that cannot call tools take part in a
// team. A coordination turn offers the workflow tools (new_answer, vote);
// a small local model behind llama.cpp, whose chat template drops `tools`,
// answers such a request in plain text and never acts. Wrap puts a model
// behind a seam that, for the requests offering the workflow tools, asks
// for the action another way and turns the reply back into the tool call
// the agent's turn expects:
//
//   - json_schema: the tools leave the request, which carries
//     `response_format: {type: json_schema}` instead, a schema whose only
//     instances are the actions open now ({"action": "new_answer",
//     "content": …} or {"action": "vote", "agent_id": one of the labels,
//     "reason": …}, or in decomposition mode {"action": "stop", "summary":
//     …, "status": complete|blocked} instead of vote, stop.go); llama.cpp,
//     vLLM, SGLang and LM Studio turn it into a
//     grammar, so even a 135M model replies with a valid action;
//   - text: the system prompt asks for "ANSWER: …" or "VOTE: <id>" and
//     "REASON: …" (or "STOP: …" and "STATUS: …" in decomposition mode),
//     for servers that honour neither tools nor
//     response_format;
//   - native: the request goes as it is (cloud providers, and local
//     servers with a tool-calling template);
//   - auto: native until the server shows it cannot call tools — its
//     llama.cpp /props says the chat template supports no tool calls, or
//     it refuses a request for carrying tools (HTTP 400 naming tools, as
//     vLLM without a tool parser and Ollama do), or it answers two
//     coordination requests in a row in prose without a tool call — then
//     json_schema, and text if the server refuses the schema as well.
//
// The reply is read leniently in both fallback modes (JSON, or the
// ANSWER:/VOTE: lines, so a server that ignores response_format still
// works); earlier actions and the coordinator's verdicts go back to the
// model as text. Requests without the workflow tools (the final
// presentation, a direct answer) pass through, except that a
// post-evaluation's submit/restart tools are dropped: its text reply
// counts as submit. An agent's own tools (MCP, custom, workspace) are not
// offered in the fallback modes.
//
// The mode is the backend key workflow_actions; DefaultMode gives auto
// for local servers and native for everything else.
package toolless
