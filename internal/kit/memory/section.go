package memory

import (
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/kit/kitfile"
)

// maxShown bounds the short-term text shown in the prompt.
const maxShown = 16 << 10

// Section is the "Memory System" prompt section (upstream's MemorySection,
// priority high, tag <memory>) for the workspace ws as it is now: the two
// tiers, the short-term memories in full, the long-term ones by name and
// description, the verification memo apart, and what mode m lets the
// agent write. view is where the others' answers' files are (their
// memory/ included); "" leaves that line out.
func Section(ws string, m Mode, view string) string {
	var b strings.Builder
	b.WriteString("\n\n<memory priority=\"high\">\n## Memory System\n")
	b.WriteString("Document decisions and learnings so that later work goes faster and avoids repeated mistakes: " +
		"why something was decided, what worked, what failed.\n\n")
	fmt.Fprintf(&b, "Storage tiers, markdown files with optional YAML front matter (name, description):\n"+
		"- %s/%s/ (shown to you in full every turn): preferences, current findings, small tactical notes (under about 100 lines).\n"+
		"- %s/%s/ (read on demand with the file tools): detailed analyses and lessons; give each a `description:` in its front matter.\n",
		Dir, ShortTerm, Dir, LongTerm)
	short, _ := kitfile.Dir(ws+"/"+Dir, ShortTerm, ".md")
	var memo []kitfile.File
	b.WriteString("\n### Current short-term memories\n")
	shown, any := 0, false
	for _, f := range short {
		if strings.HasPrefix(f.Name, "verification_latest") {
			if len(strings.TrimSpace(string(f.Data))) > 0 {
				memo = append(memo, f)
			}
			continue
		}
		text := strings.TrimSpace(string(f.Data))
		if shown+len(text) > maxShown {
			fmt.Fprintf(&b, "- %s/%s/%s (too long to show here: read it)\n", Dir, ShortTerm, f.Name)
			continue
		}
		shown += len(text)
		any = true
		fmt.Fprintf(&b, "#### %s\n%s\n", f.Name, text)
	}
	if !any {
		b.WriteString("(none yet)\n")
	}
	long, _ := kitfile.Dir(ws+"/"+Dir, LongTerm, ".md")
	if len(long) > 0 {
		b.WriteString("\n### Long-term memories (read the file when relevant)\n")
		for _, f := range long {
			meta, body := kitfile.FrontMatter(f.Data)
			desc := kitfile.String(meta, "description")
			if desc == "" {
				desc = firstLine(body)
			}
			fmt.Fprintf(&b, "- %s/%s/%s: %s\n", Dir, LongTerm, f.Name, desc)
		}
	}
	for _, f := range memo {
		fmt.Fprintf(&b, "\n### Verification replay memo (%s/%s/%s)\n%s\n"+
			"Reuse the earlier verification artifacts in .massgen_scratch/verification/ and its scripts instead of starting over.\n",
			Dir, ShortTerm, f.Name, strings.TrimSpace(string(f.Data)))
	}
	if view != "" {
		fmt.Fprintf(&b, "\nThe other agents' memories, as of their current answers, are in %s/<label>/%s/ (read-only): compare before you write.\n", view, Dir)
	}
	b.WriteString("\n" + writeRule(m))
	b.WriteString("If you give the final presentation, consolidate the team's memories in your own " + Dir +
		"/ (the others' are merged into it after the run under \"From Agent <id>\" headers where names clash): keep what the next turn needs.\n")
	b.WriteString("</memory>")
	return b.String()
}

func writeRule(m Mode) string {
	switch m {
	case FinalOnly:
		return "Memory is read-only while the agents coordinate: write memories only if you give the final presentation.\n"
	case VerificationAndFinal:
		return fmt.Sprintf("Memory is read-only while the agents coordinate, except the verification memo %s/%s/%s "+
			"(what you verified and how, to replay it): write the other memories only if you give the final presentation.\n", Dir, ShortTerm, Memo)
	}
	return "Write memories with the file tools as you learn; update a file rather than adding near-duplicates.\n"
}

func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
			if len(l) > 160 {
				l = l[:160] + "…"
			}
			return l
		}
	}
	return "(no description)"
}
