package claudecode

import "github.com/massgen/massgen/internal/agent/cli"

// LoginFiles implements cli.Login: on Linux Claude Code keeps a Claude
// subscription's OAuth tokens in ~/.claude/.credentials.json, and reads
// them there when it has no ANTHROPIC_API_KEY (it sends the access token
// as a bearer to its endpoint, ANTHROPIC_BASE_URL included).
func (Vendor) LoginFiles() []string { return []string{".claude/.credentials.json"} }

// LoginCommand implements cli.Login.
func (Vendor) LoginCommand() string { return "`claude auth login` (or /login in claude)" }

var _ cli.Login = Vendor{}
