// Package custom runs the custom tools of MassGen configs (`custom_tools:`
// in a backend): Python functions from a file, as upstream MassGen runs
// them, and any executable (`type: command`), each behind the tool.Tool
// seam.
//
// Python tools run in one long-lived runner process per team (Python), a
// small script embedded here and written to the user's cache directory on
// first use. It speaks JSON lines over stdin and stdout, so a call does not
// pay Python's start-up; calls run concurrently in it. The runner provides a
// compatible massgen.tool._result module, so tool files written for upstream
// MassGen import unchanged; it derives each tool's JSON Schema from the
// function's signature, type hints and docstring.
//
// Command tools (Command) start their executable for each call, with the
// JSON arguments on stdin and the result on stdout.
//
// Nothing here crashes a turn: a missing Python, file or function
// (Unavailable), a tool that raises, a runner that dies, a command that
// fails or overruns are all error results, written for the model. Every
// process runs in its own process group, killed with the team (and, on
// Linux, when massgen dies), so none is left behind.
package custom
