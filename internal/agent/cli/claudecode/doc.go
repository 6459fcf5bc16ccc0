// Package claudecode is the claude_code backend: Claude Code (the npm
// package @anthropic-ai/claude-code, program "claude", pinned at 2.1.332
// in tests/cli-agents) as a team member, driven by internal/agent/cli.
// A program links it by importing it; its init registers the vendor.
//
// # How Claude Code runs
//
// One process per task, in its non-interactive streaming mode:
//
//	claude -p --output-format stream-json --verbose --include-partial-messages
//	       --no-session-persistence --setting-sources "" --permission-prompts none --strict-mcp-config
//	       --mcp-config HOME/.massgen/mcp.json --system-prompt-file HOME/.massgen/system.md
//	       --permission-mode bypassPermissions --disallowedTools … [--model M]
//	       [--max-turns N] [--effort E] [--thinking disabled]
//
// with the task's message on standard input (no argument length limit,
// nothing in the process list) and its working directory the agent's
// workspace. The environment is the frame's (HOME is the agent's private
// home, nothing of massgen's own) plus:
//
//   - ANTHROPIC_API_KEY, the key (without one, Claude Code runs on the
//     user's login, .claude/.credentials.json, which the app copies into
//     the home: LoginFiles); ANTHROPIC_BASE_URL, the endpoint without
//     its /v1 (Claude Code posts to BASE/v1/messages?beta=true), so the
//     simulator and MASSGEN_CLAUDE_CODE_BASE_URL work;
//   - CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, DISABLE_TELEMETRY,
//     DISABLE_ERROR_REPORTING, DISABLE_AUTOUPDATER, DISABLE_UPDATES,
//     DISABLE_BUG_COMMAND: nothing goes to the network but the requests to
//     the provider (without them it resolves other hosts at start-up; with
//     them strace shows one connection, to the endpoint);
//   - IS_SANDBOX=1: Claude Code refuses bypassPermissions as root unless
//     told it runs in a sandbox, which it does (Agent.Wrap: bubblewrap with
//     only the workspace and its home writable);
//   - CLAUDE_CODE_MAX_RETRIES=2: massgen retries a failed turn itself, so
//     a provider that keeps failing fails the turn in seconds, not after
//     Claude Code's ten backed-off attempts;
//   - MAX_THINKING_TOKENS when a thinking budget is set.
//
// Nothing is read from the user's Claude settings or the project's
// (.claude/ and CLAUDE.md in the workspace are not loaded: --setting-sources
// "" as upstream's setting_sources = []), and only the MCP servers of
// --mcp-config exist: massgen's workflow server (streamable HTTP on
// 127.0.0.1, its bearer token in the file's headers, the file 0600) and the
// agent's own mcp_servers. The workflow server's tool-call timeout is set
// to a day: a call returns with the coordinator's verdict, which may wait
// on the other agents, so only the turn's end may bound it (Claude Code's
// own default is not documented; a verdict held 75 s was still read).
// Claude Code names their tools
// mcp__<server>__<tool>, so the workflow tools are mcp__massgen__new_answer
// and mcp__massgen__vote.
//
// # Sessions
//
// Every task starts a fresh session (the session id is reported, not
// resumed): massgen's prompts are self-contained (each carries the
// question, the current answers and what the agent must do now, as our API
// agents' turns do), a resumed session would carry the superseded answers
// and grow with every turn, and Claude Code keeps a session's first
// system prompt for its whole life (--system-prompt-snapshot), so a resumed
// one would not see the new turn's instructions. Sessions are not written
// to disk for the same reason.
//
// # Upstream keys (MassGen v0.1.73's claude_code block)
//
//   - permission_mode: upstream defaults to acceptEdits but approves every
//     tool call itself (can_use_tool allows all; its hooks check paths).
//     Here the sandbox enforces, so the CLI never asks: every mode runs as
//     bypassPermissions (and --permission-prompts none denies whatever
//     would still ask). plan is planning without changes: Edit, Write,
//     NotebookEdit and Bash are taken away, since Claude Code's own plan
//     mode also denies every MCP tool, the workflow tools included, and a
//     turn in it could never end.
//   - allowed_tools → --allowedTools (rules that need no approval; the
//     workflow tools are always among them); disallowed_tools and massgen's
//     exclude_tools → --disallowedTools, on top of upstream's list that is always
//     disallowed: Bash(rm*), Bash(sudo*), Bash(su*), Bash(chmod*),
//     Bash(chown*), Task, TodoWrite, ExitPlanMode, Skill and the IDE tools;
//     WebSearch and WebFetch unless enable_web_search: true. (Upstream also
//     takes Bash away unless enable_mcp_command_line: true, because its
//     command tool is then its own MCP server; massgen gives a CLI agent no
//     such server, so Bash stays, under the sandbox.)
//   - max_turns → --max-turns; model → --model (or the agent's model);
//   - system_prompt replaces Claude Code's default prompt, then massgen's
//     instructions follow; append_system_prompt comes after them (a config
//     file cannot set these two in a backend block, as upstream's validator
//     refuses them; the agent's system_message is massgen's instructions). With
//     use_default_prompt: true (and no system_prompt) Claude Code's own
//     prompt is kept and the rest appended (--append-system-prompt-file);
//     otherwise massgen's replaces it (--system-prompt-file), as upstream.
//   - past the round's hard time limit (cli.Invocation.WorkflowOnly) the
//     CLI is started with --tools "": none of its own tools, only the
//     workflow server's.
//   - reasoning: {effort} → --effort (minimal → low); a thinking budget
//     (reasoning.budget_tokens, thinking.budget_tokens, max_thinking_tokens)
//     → MAX_THINKING_TOKENS; thinking: {type: disabled} or a budget of 0 →
//     --thinking disabled.
//   - max_budget_usd → --max-budget-usd; fallback_model → --fallback-model;
//     env → added to the CLI's environment (never over the keys above).
//
// add_dirs is ignored with a warning (massgen's sandbox decides what the
// CLI sees; context_paths are the way). massgen's own backend keys (cwd,
// context_paths, command_line_*, …) are the config's to judge; any other
// key has no Claude Code equivalent here and draws a warning that names it
// (Vendor.Check).
//
// # Output
//
// Each stream-json line becomes outcomes: text and thinking deltas as they
// stream (agent.Text, agent.Reasoning), each model response's usage at its
// message_stop (agent.ModelCall), each of Claude Code's own tool calls
// once its result is back (agent.ToolUsed; the workflow tools are not
// reported there, their calls are the turn's proposals). The closing
// result line gives the session id, the task's usage and cost (Claude
// Code prices it), the final text and an error: a provider's refusal
// (api_error_status) becomes an *llm.Error with that status, so a bad key
// is an auth failure and a 429 a rate limit.
//
// It must never import the app, the config or the orchestrator.
package claudecode
