// Package mcpserver is massgen itself as an MCP server: any MCP client
// (Claude Code, Codex, Cursor, …) can ask a massgen team a question through
// the tool massgen_run, and list the shipped example teams with
// massgen_examples.
//
//	s := mcpserver.New(env, mcpserver.Options{Config: "@examples/sim_three_agents"})
//	defer s.Close()
//	err := s.ServeStdio(ctx, os.Stdin, os.Stdout) // or http.Handle("/mcp", s.Handler(HTTPOptions{APIKey: key}))
//
// Whoever calls massgen_run chooses its config, and a config can run
// commands: a call may name only an example, a file of Options.ConfigDir
// or an inline team of models, unless Options.AllowConfigPaths
// (configs.go). Over HTTP every request needs the API key (http.go).
//
// A call runs the team through app.Execute, the same path as the command
// line and massgen serve, with the same logs. While it runs, every
// coordination step (an answer, a vote, a failure) is sent to the client as
// a progress notification, worded by event.Describe, when the client asked
// for progress. When the client cancels the call (notifications/cancelled)
// or goes away, the run's context is cancelled and the team's model
// requests stop. A run that does not complete is a tool error result
// (isError) naming its status and reason: the calling model reads it, as
// it reads an answer.
//
// It is built on the official Go SDK (github.com/modelcontextprotocol/go-sdk)
// and imports internal/app for runs; it must never import internal/cli or
// internal/server.
package mcpserver
