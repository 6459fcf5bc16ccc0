// Package anthropic links Anthropic's Messages API (backend type claude)
// into a program that imports it:
//
//	import _ "github.com/massgen/massgen/providers/anthropic"
package anthropic

import _ "github.com/massgen/massgen/internal/llm/anthropic" // registers the backend type
