package geminicli

import "github.com/massgen/massgen/internal/agent/cli"

// LoginFiles implements cli.Login: Gemini CLI keeps a Google login's
// OAuth tokens in ~/.gemini/oauth_creds.json (unless the user chose its
// encrypted storage, GEMINI_FORCE_ENCRYPTED_FILE_STORAGE, which massgen
// does not read); Settings selects that login (oauth-personal) when the
// task has no key.
func (Vendor) LoginFiles() []string { return []string{".gemini/oauth_creds.json"} }

// LoginCommand implements cli.Login.
func (Vendor) LoginCommand() string { return "`gemini`, then Login with Google" }

// CodeAssistEndpoint is where Gemini CLI sends a Google login's requests
// (Code Assist); GOOGLE_GEMINI_BASE_URL applies to API keys only.
const CodeAssistEndpoint = "https://cloudcode-pa.googleapis.com"

var _ cli.Login = Vendor{}

// LoginBaseURL implements cli.LoginEndpoint.
func (Vendor) LoginBaseURL() string { return CodeAssistEndpoint }

var _ cli.LoginEndpoint = Vendor{}
