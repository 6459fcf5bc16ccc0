package app

// The coding-agent CLIs a team can have (backend types claude_code,
// codex, gemini_cli, copilot): each vendor is a small package of command lines,
// settings and an output decoder, so every program built on app links
// them all.
import (
	_ "github.com/massgen/massgen/internal/agent/cli/claudecode"
	_ "github.com/massgen/massgen/internal/agent/cli/codex"
	_ "github.com/massgen/massgen/internal/agent/cli/copilot"
	_ "github.com/massgen/massgen/internal/agent/cli/geminicli"
)
