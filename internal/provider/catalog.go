package provider

import (
	"slices"
	"strings"
)

// Wire is the API family a backend speaks.
type Wire string

const (
	WireChat      Wire = "chatcompat" // OpenAI Chat Completions and compatibles
	WireResponses Wire = "responses"  // OpenAI Responses API
	WireAnthropic Wire = "anthropic"  // Anthropic Messages
	WireGemini    Wire = "gemini"     // Google genai
	WireSim       Wire = "sim"        // the built-in simulator (Chat Completions over loopback)
	WireCLI       Wire = "cli"        // an external agent program (claude_code, codex, gemini_cli, copilot)
	WireExternal  Wire = "external"   // another agent framework (ag2)
)

// Spec describes one backend kind.
type Spec struct {
	Type    string
	Wire    Wire
	BaseURL string   // default endpoint; "" means the SDK default or must be given
	KeyEnv  []string // API key variables, first set wins; empty means no key needed
	// NeedsBaseURL is true for generic endpoints whose URL the user must give.
	NeedsBaseURL bool
	// Builtins are the MassGen backend flags (enable_web_search,
	// enable_code_execution, enable_code_interpreter) this kind turns into
	// provider-side tools.
	Builtins []string
	// Native reports whether massgen can talk to this kind in this build.
	// Kinds that are recognised but not yet implemented get one verdict
	// from Judge, in validation and at run time alike.
	Native bool
	// ModelOptional: the kind picks its own model when none is given.
	ModelOptional bool
}

var catalog = []Spec{
	{Type: "sim", Wire: WireSim, Native: true, ModelOptional: true},
	{Type: "chatcompletion", Wire: WireChat, BaseURL: "https://api.openai.com/v1", KeyEnv: []string{"OPENAI_API_KEY"}, Native: true},
	{Type: "openai", Wire: WireResponses, BaseURL: "https://api.openai.com/v1", KeyEnv: []string{"OPENAI_API_KEY"}, Native: true,
		Builtins: []string{"enable_web_search", "enable_code_interpreter"}},
	{Type: "claude", Wire: WireAnthropic, BaseURL: "https://api.anthropic.com", KeyEnv: []string{"ANTHROPIC_API_KEY"}, Native: true,
		Builtins: []string{"enable_web_search", "enable_code_execution"}},
	{Type: "gemini", Wire: WireGemini, BaseURL: "https://generativelanguage.googleapis.com", KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Native: true,
		Builtins: []string{"enable_web_search", "enable_code_execution"}},
	{Type: "grok", Wire: WireChat, BaseURL: "https://api.x.ai/v1", KeyEnv: []string{"XAI_API_KEY"}, Native: true,
		Builtins: []string{"enable_web_search"}},
	// Azure OpenAI through its OpenAI-compatible v1 API
	// (https://<resource>.openai.azure.com/openai/v1); the model is the
	// deployment name. The endpoint comes from base_url, azure_endpoint or
	// AZURE_OPENAI_ENDPOINT.
	{Type: "azure_openai", Wire: WireChat, KeyEnv: []string{"AZURE_OPENAI_API_KEY"}, Native: true},
	// Coding-agent CLIs run as agents (internal/agent/cli): the vendor's
	// program, in the agent's workspace and sandbox.
	{Type: "claude_code", Wire: WireCLI, KeyEnv: []string{"ANTHROPIC_API_KEY"}, ModelOptional: true, Native: true},
	{Type: "ag2", Wire: WireExternal, ModelOptional: true}, // its model is in its own agent_config
	{Type: "codex", Wire: WireCLI, KeyEnv: []string{"OPENAI_API_KEY"}, ModelOptional: true, Native: true},
	{Type: "gemini_cli", Wire: WireCLI, KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, ModelOptional: true, Native: true},
	// GitHub's Copilot service with a GitHub token, or with base_url any
	// provider (its api_key then).
	{Type: "copilot", Wire: WireCLI, KeyEnv: []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"}, ModelOptional: true, Native: true},
	{Type: "zai", Wire: WireChat, BaseURL: "https://api.z.ai/api/paas/v4/", KeyEnv: []string{"ZAI_API_KEY"}, Native: true},
	{Type: "cerebras", Wire: WireChat, BaseURL: "https://api.cerebras.ai/v1", KeyEnv: []string{"CEREBRAS_API_KEY"}, Native: true},
	{Type: "together", Wire: WireChat, BaseURL: "https://api.together.xyz/v1", KeyEnv: []string{"TOGETHER_API_KEY"}, Native: true},
	{Type: "fireworks", Wire: WireChat, BaseURL: "https://api.fireworks.ai/inference/v1", KeyEnv: []string{"FIREWORKS_API_KEY"}, Native: true},
	{Type: "groq", Wire: WireChat, BaseURL: "https://api.groq.com/openai/v1", KeyEnv: []string{"GROQ_API_KEY"}, Native: true},
	{Type: "openrouter", Wire: WireChat, BaseURL: "https://openrouter.ai/api/v1", KeyEnv: []string{"OPENROUTER_API_KEY"}, Native: true},
	{Type: "nebius", Wire: WireChat, BaseURL: "https://api.studio.nebius.ai/v1", KeyEnv: []string{"NEBIUS_API_KEY"}, Native: true},
	{Type: "moonshot", Wire: WireChat, BaseURL: "https://api.moonshot.cn/v1", KeyEnv: []string{"MOONSHOT_API_KEY", "KIMI_API_KEY"}, Native: true},
	{Type: "kimi", Wire: WireChat, BaseURL: "https://api.moonshot.cn/v1", KeyEnv: []string{"MOONSHOT_API_KEY", "KIMI_API_KEY"}, Native: true},
	{Type: "qwen", Wire: WireChat, BaseURL: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", KeyEnv: []string{"QWEN_API_KEY"}, Native: true},
	{Type: "poe", Wire: WireChat, KeyEnv: []string{"POE_API_KEY"}, NeedsBaseURL: true, Native: true},
	{Type: "ollama", Wire: WireChat, BaseURL: "http://localhost:11434/v1", Native: true},
	{Type: "lmstudio", Wire: WireChat, BaseURL: "http://localhost:1234/v1", Native: true},
	{Type: "vllm", Wire: WireChat, BaseURL: "http://localhost:8000/v1", KeyEnv: []string{"VLLM_API_KEY"}, Native: true},
	{Type: "sglang", Wire: WireChat, BaseURL: "http://localhost:30000/v1", KeyEnv: []string{"SGLANG_API_KEY"}, Native: true},
}

// Lookup returns the spec for a backend type (exact, case-sensitive, as MassGen).
func Lookup(typ string) (Spec, bool) {
	i := slices.IndexFunc(catalog, func(s Spec) bool { return s.Type == typ })
	if i < 0 {
		return Spec{}, false
	}
	return catalog[i], true
}

// SupportsBuiltin reports whether a backend type turns the flag (e.g.
// enable_web_search) into a provider-side tool.
func SupportsBuiltin(typ, flag string) bool {
	s, ok := Lookup(typ)
	return ok && slices.Contains(s.Builtins, flag)
}

// Runnable lists the backend types this build can run (Names without the
// recognised-but-refused ones, such as ag2): the list a "one of" offers.
func Runnable() []string {
	var out []string
	for _, s := range catalog {
		if s.Native {
			out = append(out, s.Type)
		}
	}
	return out
}

// Names lists every accepted backend type, in catalogue order.
func Names() []string {
	out := make([]string, len(catalog))
	for i, s := range catalog {
		out[i] = s.Type
	}
	return out
}

// keyFromBaseURL maps a generic chatcompletion base URL to the key variable
// of the provider it points at, as MassGen does.
var keyFromBaseURL = []struct{ substr, env string }{
	{"cerebras.ai", "CEREBRAS_API_KEY"},
	{"together.xyz", "TOGETHER_API_KEY"},
	{"fireworks.ai", "FIREWORKS_API_KEY"},
	{"groq.com", "GROQ_API_KEY"},
	{"nebius.com", "NEBIUS_API_KEY"},
	{"nebius.ai", "NEBIUS_API_KEY"},
	{"openrouter.ai", "OPENROUTER_API_KEY"},
	{"z.ai", "ZAI_API_KEY"},
	{"bigmodel.cn", "ZAI_API_KEY"},
	{"moonshot.ai", "MOONSHOT_API_KEY"},
	{"moonshot.cn", "MOONSHOT_API_KEY"},
	{"poe.com", "POE_API_KEY"},
	{"aliyuncs.com", "QWEN_API_KEY"},
	{"x.ai", "XAI_API_KEY"},
	{"api.openai.com", "OPENAI_API_KEY"},
	{"anthropic.com", "ANTHROPIC_API_KEY"},
	{"generativelanguage.googleapis.com", "GEMINI_API_KEY"},
}

// KeyEnv returns the API key variables for a backend, taking the base URL
// into account for the generic chatcompletion type.
func KeyEnv(typ, baseURL string) []string {
	if typ == "chatcompletion" && baseURL != "" {
		for _, m := range keyFromBaseURL {
			if strings.Contains(baseURL, m.substr) {
				return []string{m.env}
			}
		}
		return nil // a local or unknown endpoint: the key is optional
	}
	s, _ := Lookup(typ)
	return s.KeyEnv
}

// InferType guesses the backend type from a model name, for `--model NAME`
// and for configs that omit `type`. It returns "" when it cannot tell.
func InferType(model string) string {
	m := strings.ToLower(model)
	switch {
	case m == "sim" || strings.HasPrefix(m, "sim-") || strings.HasPrefix(m, "sim/"):
		return "sim"
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "chatgpt-"):
		return "openai"
	case strings.HasPrefix(m, "claude-"):
		return "claude"
	case strings.HasPrefix(m, "gemini-"):
		return "gemini"
	case strings.HasPrefix(m, "grok-"):
		return "grok"
	case strings.HasPrefix(m, "glm-"):
		return "zai"
	}
	if p, _, ok := strings.Cut(m, "/"); ok {
		if _, known := Lookup(p); known {
			return p
		}
	}
	return ""
}
