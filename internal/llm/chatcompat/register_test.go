package chatcompat

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/llm"
)

func TestAzureEndpointBecomesItsV1Base(t *testing.T) {
	tests := map[string]string{
		"https://res.openai.azure.com":            "https://res.openai.azure.com/openai/v1",
		"https://res.openai.azure.com/":           "https://res.openai.azure.com/openai/v1",
		"https://res.openai.azure.com/openai/v1/": "https://res.openai.azure.com/openai/v1",
		"http://127.0.0.1:8089/v1":                "http://127.0.0.1:8089/v1",
		"":                                        "",
	}
	for in, want := range tests {
		if got := azureBase(in); got != want {
			t.Errorf("azureBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAzurePrepareTakesItsEndpointKeysOutOfTheParameters(t *testing.T) {
	b := llm.Backend{Type: "azure_openai", Params: map[string]any{"azure_endpoint": "https://res.openai.azure.com", "api_version": "2024-10-21", "temperature": 0.5}}
	if err := prepareAzure(&b); err != nil {
		t.Fatal(err)
	}
	if b.BaseURL != "https://res.openai.azure.com/openai/v1" {
		t.Errorf("base URL %q", b.BaseURL)
	}
	if diff := cmp.Diff(map[string]any{"temperature": 0.5}, b.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	b = llm.Backend{Type: "azure_openai", Params: map[string]any{}, Getenv: func(k string) string {
		if k == "AZURE_OPENAI_ENDPOINT" {
			return "https://env.openai.azure.com/"
		}
		return ""
	}}
	if err := prepareAzure(&b); err != nil || b.BaseURL != "https://env.openai.azure.com/openai/v1" {
		t.Errorf("from the environment: %q, %v", b.BaseURL, err)
	}
	if err := prepareAzure(&llm.Backend{Params: map[string]any{}}); err == nil {
		t.Error("no endpoint anywhere: no error")
	}
}

func TestGrokWebSearchBecomesLiveSearchUnlessSetExplicitly(t *testing.T) {
	b := llm.Backend{Params: map[string]any{"enable_web_search": true}}
	_ = prepareGrok(&b)
	if diff := cmp.Diff(map[string]any{"search_parameters": map[string]any{"mode": "auto"}}, b.Params); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	own := map[string]any{"mode": "on", "sources": []any{"x"}}
	b = llm.Backend{Params: map[string]any{"enable_web_search": true, "search_parameters": own}}
	_ = prepareGrok(&b)
	if diff := cmp.Diff(map[string]any{"search_parameters": own}, b.Params); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
