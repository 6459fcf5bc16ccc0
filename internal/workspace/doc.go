// Package workspace is the one place that decides whether an agent may read
// or write a path at this moment of the run, and the only code that touches
// an agent's files on its behalf.
//
// A Guard is built per agent from a Policy: the agent's own workspace
// (read and write), read-only directories (the others' snapshots, read
// context paths), context paths with permission write (writable only while
// the guard is in the final presentation, which the run turns on for the
// winner), protected paths (never writable) and hidden paths (never
// readable: the other agents' live workspaces).
//
// A decision is not a string comparison. Every operation opens what it
// touches with openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV)
// from the directory that grants access, so the kernel itself refuses `..`,
// absolute symlinks and symlinks that leave that directory, in any path
// component, at the moment of opening (no check-then-use race). The real
// path of the opened descriptor (/proc/self/fd) is then checked against
// the policy again, so a symlink inside a wide root cannot reach a narrower
// protected or hidden place. Writes go to a new file in the already-opened
// parent directory and are renamed over the target, so a write never goes
// through a symlink or a hard link; a file with more than one link that the
// agent did not create is refused outright. Deleting needs the file to have
// been created or read by this agent.
//
// A refusal is a *Refusal error saying what was asked, what it resolved to
// and what the agent may touch; tools pass it to the model as is.
//
// Check judges a path the same way without touching it, for tools that do
// the work themselves (an MCP server given the path next).
//
// Commands run by an agent, and its MCP servers, get the same view of the
// file system from package sandbox (bubblewrap), built from the same Policy.
//
// CopyTree makes the snapshots of workspaces: reflinks (Clone) from a live
// workspace, hard links (Link) from a snapshot, never a symbolic link. It
// walks by directory descriptors (each entry opened from its open parent,
// no symbolic link followed, no mount crossed, in any component), so a
// process swapping a directory for a link while it runs cannot redirect
// it; WalkTree walks the same way for whoever fingerprints a tree.
//
// This package imports only the standard library and golang.org/x/sys.
package workspace
