// Package all links every LLM provider massgen has into a program that
// imports it, as the massgen command does:
//
//	import _ "github.com/massgen/massgen/providers/all"
package all

import (
	_ "github.com/massgen/massgen/providers/anthropic"
	_ "github.com/massgen/massgen/providers/chatcompat"
	_ "github.com/massgen/massgen/providers/gemini"
	_ "github.com/massgen/massgen/providers/openai"
)
