// Package isolate gives each agent of a write_mode run (MassGen v0.1.73's
// coordination.write_mode: auto, worktree, isolated) its own copy of every
// writable context path, fresh each round, and applies the winner's changes
// to the real paths at the end of the run.
//
// A Session is made once per run from the writable context paths. For
// each one it keeps a base: a pristine copy of the path as the run found
// it, in massgen's own directory (hidden from the agents). A git repository
// (worktree, or auto on a repository) is copied as git sees it — the files
// it tracks plus the untracked ones it does not ignore (git ls-files), the
// user's uncommitted edits included; any other directory (isolated, or auto
// elsewhere) is copied whole. .git and .massgen directories and .env files
// are never copied.
//
// Round lays a fresh copy of every base into the agent's workspace, at
// .worktree/ctx_<n>/ (with a .massgen_scratch/ for experiments that is
// never applied), before each of its turns: the agent edits its copy with
// the ordinary file tools and commands, so the Guard and the sandbox stay
// the only way it touches files, and the real context path stays read-only
// to it. Annotate writes the changes of a snapshot's copies beside them
// (.worktree/ctx_<n>.diff, a unified diff), so the agents shown an answer
// see its diff as well as its files.
//
// Apply compares the winner's copy with the base and writes what changed
// into the real path through a Writer — the winner's Guard, opened by the
// run for that moment — so protected paths and names (.git, .env*,
// .massgen) are refused as in a final presentation. A file whose real
// content no longer matches the base (the user edited it meanwhile) has
// drifted; drift_conflict_policy decides: skip (the default) leaves the
// drifted files as the user has them and applies the rest, prefer_presenter
// overwrites them, fail applies nothing. Symbolic links, devices and other
// special files are never applied, nor anything under .git or
// .massgen_scratch.
//
// Why no `git worktree add`: a worktree's .git file points into the user's
// repository, whose index, refs and hooks it shares, and making one writes
// into the user's .git. Here git only ever reads the user's repository
// (ls-files) and compares two massgen-owned directories (diff --no-index);
// it runs with the system and global configuration off, hooks and fsmonitor
// disabled and no external diff or textconv, and never inside an agent's
// copy, so nothing an agent writes there (a .git/hooks/post-checkout, a
// .gitattributes filter) is ever run by massgen.
//
// Moving a fresh copy into a workspace goes through directory descriptors
// opened without following links (renameat), so an agent's process cannot
// redirect it by swapping .worktree for a link. Linux only, like the Guard.
//
// This package imports the standard library, golang.org/x/sys and
// internal/workspace.
package isolate
