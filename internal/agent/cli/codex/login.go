package codex

import "github.com/massgen/massgen/internal/agent/cli"

// LoginFiles implements cli.Login: Codex keeps a ChatGPT login's tokens
// in $CODEX_HOME/auth.json (~/.codex/auth.json), which the vendor's
// CODEX_HOME (<home>/.codex) reads with cli_auth_credentials_store =
// "file".
func (Vendor) LoginFiles() []string { return []string{".codex/auth.json"} }

// LoginCommand implements cli.Login.
func (Vendor) LoginCommand() string { return "`codex login`" }

var _ cli.Login = Vendor{}

// LoginBaseURL implements cli.LoginEndpoint: a ChatGPT login's requests
// go to ChatGPT's Codex backend (the built-in provider's base URL on such
// a login), not to OpenAI's API.
func (Vendor) LoginBaseURL() string { return "https://chatgpt.com/backend-api/codex" }

var _ cli.LoginEndpoint = Vendor{}
