//go:build !massgen_nodefaultproviders

package massgen

// The providers a program using this package gets without asking: the
// OpenAI-compatible family (with the built-in simulator), OpenAI's
// Responses API and Anthropic's API, all small pure-Go clients. Gemini's
// SDK brings about 200 packages (gRPC, OpenCensus, Google auth) and is
// linked only by importing github.com/massgen/massgen/providers/gemini;
// docker mode only by importing github.com/massgen/massgen/sandbox/docker.
// Build with -tags massgen_nodefaultproviders to link only the providers
// the program imports itself.
import (
	_ "github.com/massgen/massgen/providers/anthropic"
	_ "github.com/massgen/massgen/providers/chatcompat"
	_ "github.com/massgen/massgen/providers/openai"
)
