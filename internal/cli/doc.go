// Package cli is the massgen command line: cobra commands and flags, the
// plain progress display, printing and exit codes. Running a question
// (config, team, logs, run) is internal/app's job; cli parses, calls app,
// prints. massgen serve's runner (ServeRunner) is here too: it translates
// between internal/server's requests and app's, so neither imports the
// other. main just calls Main. The wizards (setup, quickstart, init) ask
// with huh forms on a terminal and take flags otherwise.
//
// Exit codes (DESIGN.md §6): 0 success, 1 config or usage error, 2 execution
// error (all agents failed, provider errors), 3 timeout without an answer,
// 4 interrupted.
package cli
