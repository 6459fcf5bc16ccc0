// Package codex is the Codex CLI (npm @openai/codex, pinned at 0.171.0 in
// tests/cli-agents) as a massgen agent: backend type codex, program codex.
// Importing it registers the vendor with internal/agent/cli.
//
// Each task runs `codex exec --json --skip-git-repo-check -C
// <workspace> … -` with the task's message on standard input (no length
// limit, nothing parsed as a flag), as Codex's native binary rather than
// the npm package's node launcher (cli.Resolver: under Node 20 the
// launcher keeps the binary as a child, which a kill -9 of massgen would
// orphan, and takes about a second to start), and reads its JSONL events:
// thread.started gives the session id; completed items give the text
// (agent_message), reasoning, and the CLI's own tool calls with their
// results (command_execution as "shell", file_change as "apply_patch",
// mcp_tool_call as mcp__server__tool, web_search). Its events give usage
// only per turn (every request summed, and nothing for a turn cut short),
// so the decoder also reads the session file Codex writes in its home
// (sessions/…/rollout-…-<thread>.jsonl), which records each response's
// usage: one agent.ModelCall per response, and a cancelled task's usage
// up to its last response (rollout.go). Codex reports no cost. An error event is an attempt Codex retries (a failed
// ModelCall); turn.failed ends the task with an *llm.Error that carries
// the provider's HTTP status when the message names one ("unexpected
// status 401 Unauthorized"; Codex's quota and capacity messages get 429
// and 503), so an auth or quota failure is classified as such. An
// unreachable provider ends the task after three failed connections
// (about 25 s; cli.Stopper), where Codex would wait "for network" until
// the turn's deadline.
//
// Settings. CODEX_HOME is Home/.codex, which Prepare writes for every task:
// config.toml and instructions.md. Codex 0.171.0 ignores OPENAI_BASE_URL,
// so with an endpoint or a key massgen defines its own model provider
// ("massgen": base_url, wire_api = "responses", env_key = OPENAI_API_KEY,
// the key passed in that variable only; without a key, requires_openai_auth:
// the user's ChatGPT login, auth.json, copied into CODEX_HOME by the app
// through LoginFiles); with neither, Codex's built-in OpenAI provider and
// that login apply. The system
// prompt replaces Codex's built-in instructions (model_instructions_file,
// as upstream's AGENTS.md does). The workflow server and the agent's own
// MCP servers are [mcp_servers] entries; HTTP headers (the workflow
// server's bearer token) go through env_http_headers, so no secret is in
// the file, and the variables holding them (MASSGEN_MCP_TOKEN_n) and the
// key are kept from the commands Codex runs (shell_environment_policy).
// The workflow server is required (Codex fails at once without it) and
// its calls have no timeout of Codex's: a call waits for the coordinator's
// verdict, which the turn's deadline bounds. MCP tools are pre-approved
// (default_tools_approval_mode = "approve"): under approval_policy =
// "never" Codex would otherwise refuse every MCP call. Nothing goes to
// the network besides the provider and the MCP servers: no update check,
// analytics, feedback or OpenTelemetry export, and the plugins feature is
// off (it syncs a curated plugin list from GitHub and chatgpt.com at
// start-up; checked with strace). Codex names an MCP tool
// mcp__<server>__<tool>; in a Responses request it offers each server's
// tools as one namespace ("mcp__massgen" holding new_answer and vote),
// which the simulator records as mcp__massgen__new_answer.
//
// The workspace does not configure the CLI: its AGENTS.md is not read
// (project_doc_max_bytes = 0), and its .codex/config.toml neither (Codex
// reads a project's only when the project is trusted).
//
// Sandbox. massgen's sandbox is the enforcement (cli.Agent.Wrap runs the
// CLI under bubblewrap with only the workspace and Home writable). Codex's
// own sandbox (Landlock, seccomp, its bundled bubblewrap) cannot nest
// inside it, so when massgen sandboxes the CLI it runs with
// --dangerously-bypass-approvals-and-sandbox, the flag Codex documents for
// environments that are externally sandboxed, as upstream does in Docker.
// Codex does not refuse to run as root. Without massgen's sandbox
// (command_line_allow_unsandboxed) upstream's approval_mode applies:
// full-auto and auto-edit (the default) → --sandbox workspace-write (the
// workspace and the home's tmp writable, not /tmp; network access on, as
// upstream), full-access → --sandbox danger-full-access,
// dangerous-no-sandbox → the bypass flag. Approvals are never asked for
// (approval_policy = "never").
//
// Sessions. Each task starts a fresh session, never resumed: massgen's
// prompts are self-contained (the question, every current answer and the
// coordination rules), as its API agents' turns are, so resuming would
// only make the model re-read superseded answers and the previous turn's
// workflow calls. The session id is still reported; its file stays in the
// private home (read for usage), which the run removes at its end.
//
// Keys of the backend block: model; model_reasoning_effort or
// reasoning.effort (default high, as upstream); reasoning.summary or
// model_reasoning_summary; approval_mode (above); enable_web_search
// (web_search = "live" or "disabled"); allowed_tools / exclude_tools
// naming mcp__server__tool become that server's enabled_tools /
// disabled_tools. Check (cli.Checker) names every other key, and values
// Codex does not take, as ignored; massgen's own backend keys (cwd,
// mcp_servers, context_paths, command_line_*, …) are the config's to judge.
package codex
