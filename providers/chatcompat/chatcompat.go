// Package chatcompat links the OpenAI-compatible Chat Completions family
// into a program that imports it: backend types chatcompletion, grok,
// azure_openai, groq, cerebras, together, fireworks, openrouter, nebius,
// moonshot, kimi, qwen, poe, zai, ollama, lmstudio, vllm, sglang and sim
// (the built-in simulator).
//
//	import _ "github.com/massgen/massgen/providers/chatcompat"
package chatcompat

import _ "github.com/massgen/massgen/internal/llm/chatcompat" // registers the backend types
