package claudecode

// DefaultBaseURL implements cli.DefaultEndpoint: Anthropic's API, which
// Claude Code uses without ANTHROPIC_BASE_URL.
func (Vendor) DefaultBaseURL() string { return "https://api.anthropic.com" }
