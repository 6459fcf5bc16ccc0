// Package openai links OpenAI's Responses API (backend type openai) into a
// program that imports it:
//
//	import _ "github.com/massgen/massgen/providers/openai"
package openai

import _ "github.com/massgen/massgen/internal/llm/openai" // registers the backend type
