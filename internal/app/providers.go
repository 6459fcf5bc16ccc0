package app

// The providers a run can build: each adapter package registers its
// backend types with llm.Register when it is linked in. A new wire API is
// one package and one line here.
import (
	_ "github.com/massgen/massgen/internal/llm/anthropic"
	_ "github.com/massgen/massgen/internal/llm/chatcompat"
	_ "github.com/massgen/massgen/internal/llm/gemini"
	_ "github.com/massgen/massgen/internal/llm/openai"
)
