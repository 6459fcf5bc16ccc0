// Package providers is the parent of the packages that link LLM providers
// into a program. A provider registers the backend types it speaks when
// its package is imported, so a program links only the providers it
// imports:
//
//	import _ "github.com/massgen/massgen/providers/gemini"    // backend type gemini
//	import _ "github.com/massgen/massgen/providers/all"       // every provider
//
// Package massgen links the OpenAI-compatible family, OpenAI's Responses
// API and Anthropic's API by default; Gemini (whose SDK is half of a
// build's packages) only when imported. Building with the tag
// massgen_nodefaultproviders drops the defaults, so that a program that
// uses one provider links that one only. The massgen command links them
// all.
package providers
