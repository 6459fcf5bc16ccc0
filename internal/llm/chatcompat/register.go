package chatcompat

import (
	"cmp"
	"errors"
	"net/url"
	"strings"

	"github.com/massgen/massgen/internal/llm"
)

// compatible are the backend types that speak plain Chat Completions at
// the base URL the provider catalogue gives them (or the config's).
var compatible = []string{
	"chatcompletion", "zai", "cerebras", "together", "fireworks", "groq", "openrouter", "nebius",
	"moonshot", "kimi", "qwen", "poe", "ollama", "lmstudio", "vllm", "sglang",
	"sim", // the built-in simulator, on the loopback URL its team started it at
}

func init() {
	for _, t := range compatible {
		llm.Register(llm.Provider{Type: t, New: newCompatible})
	}
	llm.Register(llm.Provider{Type: "grok", Prepare: prepareGrok, New: newCompatible})
	llm.Register(llm.Provider{Type: "azure_openai", Prepare: prepareAzure, New: newAzure})
}

func newCompatible(b llm.Backend) llm.Model {
	// Local servers take any key, and some SDK paths insist on one.
	return New(Options{Provider: b.Type, BaseURL: b.BaseURL, APIKey: cmp.Or(b.APIKey, "none"), Model: b.Model, Stream: b.Stream})
}

// prepareGrok turns MassGen's enable_web_search into xAI's Live Search
// (search_parameters), unless the config sets search_parameters itself.
func prepareGrok(b *llm.Backend) error {
	if on, _ := b.Params["enable_web_search"].(bool); on {
		delete(b.Params, "enable_web_search")
		if _, set := b.Params["search_parameters"]; !set {
			b.Params["search_parameters"] = map[string]any{"mode": "auto"}
		}
	}
	return nil
}

// prepareAzure finds the endpoint of an Azure OpenAI resource: base_url,
// else the backend's azure_endpoint, else AZURE_OPENAI_ENDPOINT. Those keys
// are connection settings, not request parameters: the v1 API has no
// api-version (the key is accepted and ignored).
func prepareAzure(b *llm.Backend) error {
	endpoint, _ := b.Params["azure_endpoint"].(string)
	delete(b.Params, "azure_endpoint")
	delete(b.Params, "api_version")
	getenv := b.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	b.BaseURL = azureBase(cmp.Or(b.BaseURL, endpoint, getenv("AZURE_OPENAI_ENDPOINT")))
	if b.BaseURL == "" {
		return errors.New("backend azure_openai needs its endpoint: set AZURE_OPENAI_ENDPOINT " +
			"(https://<resource>.openai.azure.com), or base_url in the config")
	}
	return nil
}

// newAzure sends the key in Azure's own header too; its v1 API takes the
// bearer as well.
func newAzure(b llm.Backend) llm.Model {
	return New(Options{Provider: b.Type, BaseURL: b.BaseURL, APIKey: cmp.Or(b.APIKey, "none"), Model: b.Model, Stream: b.Stream,
		Headers: map[string]string{"api-key": b.APIKey}})
}

// azureBase turns an Azure OpenAI resource endpoint into the base URL of its
// OpenAI-compatible v1 API. A URL that already has a path (a gateway, the
// simulator, or .../openai/v1 itself) is used as given.
func azureBase(endpoint string) string {
	if endpoint == "" {
		return ""
	}
	u, err := url.Parse(endpoint)
	if err != nil || strings.Trim(u.Path, "/") != "" {
		return strings.TrimRight(endpoint, "/")
	}
	return strings.TrimRight(endpoint, "/") + "/openai/v1"
}
