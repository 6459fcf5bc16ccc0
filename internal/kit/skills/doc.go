// Package skills is v0.1.73's skills (orchestrator.coordination.use_skills):
// directories holding a SKILL.md whose YAML front matter names the skill
// and says what it is for, offered to agents in their prompt and read with
// the file tools or commands. Skills are read, never invoked.
//
// Discover finds them, in upstream's order and deduplicated by name: the
// project's skills_directory, ~/.agent/skills, the skills massgen ships
// (embedded; Install writes them to a directory agents may read), and with
// load_previous_session_skills the evolving skills earlier runs' winners
// left in the logs. A skill directory that is a symbolic link, or whose
// SKILL.md is not a regular file, is refused with a warning: a skill never
// leads an agent out of the directories it may read. Section is the
// "Available Skills" prompt section.
//
// Access is the Guard's: the run gives the agents the skills directories
// read-only, the project's as a write context path (writable by the
// winner in the final presentation, to save an evolving skill).
package skills
