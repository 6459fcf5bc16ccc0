package provider

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLookupFindsEveryName(t *testing.T) {
	names := Names()
	if len(names) == 0 {
		t.Fatal("Names() is empty")
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("%q listed twice", n)
		}
		seen[n] = true
		s, ok := Lookup(n)
		if !ok {
			t.Errorf("Lookup(%q) not found, but Names() lists it", n)
			continue
		}
		if s.Type != n {
			t.Errorf("Lookup(%q).Type = %q", n, s.Type)
		}
		if s.Wire == "" {
			t.Errorf("%q has no wire", n)
		}
	}
}

func TestNamesIncludeEveryDocumentedBackendType(t *testing.T) {
	// DESIGN.md §4: MassGen's type values and the compatible-family presets.
	want := []string{"openai", "chatcompletion", "claude", "gemini", "grok", "azure_openai", "lmstudio", "vllm",
		"sglang", "zai", "claude_code", "cerebras", "together", "fireworks", "groq", "openrouter", "nebius",
		"moonshot", "kimi", "qwen", "poe", "ollama", "sim"}
	for _, n := range want {
		if _, ok := Lookup(n); !ok {
			t.Errorf("backend type %q is not in the catalogue", n)
		}
	}
}

func TestLookupRejectsUnknownAndWrongCase(t *testing.T) {
	for _, n := range []string{"", "OpenAI", "Claude", "llama", "chat_completion"} {
		if s, ok := Lookup(n); ok {
			t.Errorf("Lookup(%q) = %+v, want not found", n, s)
		}
	}
}

func TestNamesReturnsAFreshSlice(t *testing.T) {
	n := Names()
	n[0] = "changed"
	if Names()[0] == "changed" {
		t.Error("Names() exposes the catalogue: a caller's change is visible")
	}
}

func TestInferType(t *testing.T) {
	tests := []struct {
		model string
		want  string
	}{
		{"gpt-4o", "openai"},
		{"gpt-4o-mini", "openai"},
		{"GPT-4o", "openai"},
		{"o3-mini", "openai"},
		{"o1", "openai"},
		{"o4-mini", "openai"},
		{"chatgpt-4o-latest", "openai"},
		{"claude-sonnet-4-5", "claude"},
		{"claude-opus-4-1", "claude"},
		{"gemini-2.5-flash", "gemini"},
		{"grok-4", "grok"},
		{"glm-4.5", "zai"},
		{"groq/llama-3.3-70b", "groq"},
		{"openrouter/anthropic/claude-3.5", "openrouter"},
		{"ollama/llama3", "ollama"},
		{"sim", "sim"},
		{"sim-a", "sim"},
		{"sim/fast", "sim"},
		{"llama3", ""},
		{"", ""},
		{"unknownprovider/model", ""},
		{"simulate", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			if got := InferType(tt.model); got != tt.want {
				t.Errorf("InferType(%q) = %q, want %q", tt.model, got, tt.want)
			}
		})
	}
}

func TestInferTypeReturnsOnlyKnownTypes(t *testing.T) {
	for _, m := range []string{"gpt-4o", "o3-mini", "claude-x", "gemini-x", "grok-x", "glm-x", "sim", "groq/x"} {
		typ := InferType(m)
		if _, ok := Lookup(typ); !ok {
			t.Errorf("InferType(%q) = %q, which Lookup does not know", m, typ)
		}
	}
}

func TestKeyEnv(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		baseURL string
		want    []string
	}{
		{"chatcompletion on groq", "chatcompletion", "https://api.groq.com/openai/v1", []string{"GROQ_API_KEY"}},
		{"chatcompletion on openrouter", "chatcompletion", "https://openrouter.ai/api/v1", []string{"OPENROUTER_API_KEY"}},
		{"chatcompletion on cerebras", "chatcompletion", "https://api.cerebras.ai/v1", []string{"CEREBRAS_API_KEY"}},
		{"chatcompletion on together", "chatcompletion", "https://api.together.xyz/v1", []string{"TOGETHER_API_KEY"}},
		{"chatcompletion on z.ai", "chatcompletion", "https://api.z.ai/api/paas/v4/", []string{"ZAI_API_KEY"}},
		{"chatcompletion on x.ai", "chatcompletion", "https://api.x.ai/v1", []string{"XAI_API_KEY"}},
		{"chatcompletion on openai", "chatcompletion", "https://api.openai.com/v1", []string{"OPENAI_API_KEY"}},
		{"chatcompletion on localhost needs no key", "chatcompletion", "http://localhost:8000/v1", nil},
		{"chatcompletion on an unknown host needs no key", "chatcompletion", "https://llm.internal.example/v1", nil},
		{"chatcompletion without base URL is OpenAI", "chatcompletion", "", []string{"OPENAI_API_KEY"}},
		{"groq preset", "groq", "", []string{"GROQ_API_KEY"}},
		{"openrouter preset", "openrouter", "", []string{"OPENROUTER_API_KEY"}},
		{"preset ignores the base URL", "groq", "https://openrouter.ai/api/v1", []string{"GROQ_API_KEY"}},
		{"claude", "claude", "", []string{"ANTHROPIC_API_KEY"}},
		{"gemini accepts two variables, GEMINI first", "gemini", "", []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}},
		{"kimi", "kimi", "", []string{"MOONSHOT_API_KEY", "KIMI_API_KEY"}},
		{"ollama needs no key", "ollama", "", nil},
		{"lmstudio needs no key", "lmstudio", "", nil},
		{"sim needs no key", "sim", "", nil},
		{"unknown type", "nope", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, KeyEnv(tt.typ, tt.baseURL)); diff != "" {
				t.Errorf("KeyEnv(%q, %q) (-want +got):\n%s", tt.typ, tt.baseURL, diff)
			}
		})
	}
}

func TestKeyEnvOfEveryPresetBaseURLMatchesThePreset(t *testing.T) {
	// A chatcompletion backend pointed at a compatible-family preset's own
	// endpoint needs the same key as the preset. claude and gemini are left
	// out: MassGen's base-URL table does not know their vendors' compatible
	// endpoints either (reference §6.1), so no key is inferred there.
	for _, n := range Names() {
		s, _ := Lookup(n)
		if s.Wire != WireChat || s.BaseURL == "" || len(s.KeyEnv) == 0 || strings.Contains(s.BaseURL, "localhost") ||
			n == "claude" || n == "gemini" {
			continue
		}
		got := KeyEnv("chatcompletion", s.BaseURL)
		if len(got) != 1 || got[0] != s.KeyEnv[0] {
			t.Errorf("chatcompletion at %s (%s's endpoint) needs %v, want [%s]", s.BaseURL, n, got, s.KeyEnv[0])
		}
	}
}

func TestNativeChatSpecsHaveAnEndpoint(t *testing.T) {
	for _, n := range Names() {
		s, _ := Lookup(n)
		if !s.Native || s.Wire != WireChat {
			continue
		}
		// Azure's endpoint is per resource: it comes from base_url,
		// azure_endpoint or AZURE_OPENAI_ENDPOINT (the CLI checks).
		if s.BaseURL == "" && !s.NeedsBaseURL && n != "azure_openai" {
			t.Errorf("%s: native chatcompat backend with neither a BaseURL nor NeedsBaseURL", n)
		}
		if s.BaseURL != "" && !strings.HasPrefix(s.BaseURL, "https://") && !strings.HasPrefix(s.BaseURL, "http://localhost") {
			t.Errorf("%s: BaseURL %q is neither https nor local", n, s.BaseURL)
		}
	}
}

// The "one of" lists offer only what this build runs (issue 22): not ag2,
// which every run refuses.
func TestRunnableLeavesOutRefusedTypes(t *testing.T) {
	r := Runnable()
	if slices.Contains(r, "ag2") || !slices.Contains(r, "openai") || !slices.Contains(r, "sim") || !slices.Contains(Names(), "ag2") {
		t.Errorf("Runnable() = %v", r)
	}
	for _, typ := range r {
		if v := Judge(typ, "m", "https://x"); !v.OK() && v.Key == "type" {
			t.Errorf("%s is offered but refused: %s", typ, v)
		}
	}
}
