package skills

import (
	"fmt"
	"html"
	"path/filepath"
	"strings"

	"github.com/massgen/massgen/internal/kit/kitfile"
)

// Registry is the file of a skills directory that, when present, replaces
// the per-skill listing with its own routing guide.
const Registry = "SKILL_REGISTRY.md"

// Section is the "Available Skills" prompt section (upstream's, tag
// <skills>): what skills are and how to use them, then each skill's name,
// description and the path of its SKILL.md. projectDir's SKILL_REGISTRY.md,
// when there is one, replaces the listing, and the skills it does not
// mention follow under "Recently added". writable says whether the winner
// may save skills into projectDir in the final presentation. Empty without
// skills.
func Section(sks []Skill, projectDir string, writable bool) string {
	if len(sks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n<skills priority=\"medium\">\n## Available Skills\n")
	b.WriteString("Skills are folders of instructions, scripts and resources for particular kinds of task. " +
		"When a task matches a skill's description, read its SKILL.md first (read_file, or cat in a command) and follow it; " +
		"its other files are next to it. Skills are read-only to you.\n")
	var registry string
	if projectDir != "" {
		if data, err := kitfile.Read(projectDir, Registry); err == nil {
			_, registry = kitfile.FrontMatter(data)
		}
	}
	list := sks
	if strings.TrimSpace(registry) != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(registry))
		list = nil
		for _, sk := range sks {
			if !strings.Contains(registry, sk.Name) {
				list = append(list, sk)
			}
		}
		if len(list) > 0 {
			b.WriteString("\nRecently added (not in the registry yet):\n")
		}
	}
	if len(list) > 0 {
		b.WriteString("<available_skills>\n")
		for _, sk := range list {
			fmt.Fprintf(&b, "<skill><name>%s</name><description>%s</description><location>%s</location></skill>\n",
				html.EscapeString(sk.Name), html.EscapeString(sk.Description), html.EscapeString(filepath.Join(sk.Dir, File)))
		}
		b.WriteString("</available_skills>\n")
	}
	if writable && projectDir != "" {
		fmt.Fprintf(&b, "If you give the final presentation, you may save what this task taught as a skill: "+
			"%s/<name>/SKILL.md with front matter name, description and evolving: true.\n", projectDir)
	}
	b.WriteString("</skills>")
	return b.String()
}
