package codex

// DefaultBaseURL implements cli.DefaultEndpoint: OpenAI's API, the base
// URL of the model provider massgen configures for a key.
func (Vendor) DefaultBaseURL() string { return "https://api.openai.com/v1" }
