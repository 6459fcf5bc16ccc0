// Package files offers an agent with a workspace its file tools —
// read_file, write_file, edit_file, list_directory, create_directory,
// glob, grep, delete_file — and execute_command. The names are the ones
// upstream MassGen's filesystem and command-line tools use, so upstream
// configs and prompts that name them keep working.
//
// Nothing here touches the disk itself: every path goes through the
// agent's workspace.Guard, which decides and performs the operation, and
// commands run through a sandbox.Runner. A refusal comes back to the model
// as an error result that says why. Text tools refuse binary files, and
// every output is capped with a note saying what was left out.
//
// This package imports tool, llm and workspace, nothing above them.
package files
