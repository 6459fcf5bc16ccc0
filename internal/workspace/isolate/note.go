package isolate

import (
	"fmt"
	"strings"
)

// Note tells an agent whose workspace is ws where its copies are, how the
// others' reach it (view: its directory of the answers shown), and what
// happens to them.
func (s *Session) Note(ws, view string, policy Policy) string {
	var b strings.Builder
	b.WriteString("<write_mode>\nThe context paths you may change are never written directly. Each round you work on your own copies, " +
		"fresh from the state the run found them in:\n")
	for _, c := range s.ctxs {
		what := "a copy of every file"
		if c.Kind == KindGit {
			what = "the files git tracks or would track, uncommitted edits included (not ignored files, not .git)"
		}
		fmt.Fprintf(&b, "- %s is your copy of %s: %s\n", c.Tree(ws), c.Source, what)
	}
	fmt.Fprintf(&b, "Make every change to the project in your copy, with the file tools or commands (cd into it). "+
		"Put experiments and evidence (test output, screenshots) under %s/ in the copy (verification/ for evidence): it is never applied. "+
		"Your own notes (a changedoc, plans) belong in your workspace, not in the copy.\n", Scratch)
	fmt.Fprintf(&b, "Each answer you are shown carries its copies and their diffs: %s/<label>/%s/<ctx>/ and %s/<label>/%s/<ctx>.diff. "+
		"To build on one, copy its files into your copy or apply its diff there (git apply, patch).\n", view, Dir, view, Dir)
	b.WriteString("If your answer wins, the changes in your copy (as it is when you answer, or at the end of your final presentation) are applied to the real paths. ")
	switch policy {
	case PreferPresenter:
		b.WriteString("A file the user changed meanwhile is overwritten with yours. ")
	case Fail:
		b.WriteString("If the user changed any of the same files meanwhile, nothing is applied. ")
	default:
		b.WriteString("A file the user changed meanwhile is left as the user has it. ")
	}
	b.WriteString("Symbolic links, special files, .git and .massgen are never applied.\n</write_mode>")
	return b.String()
}
