// Package gemini links Google's Gemini API (backend type gemini) into a
// program that imports it. Its SDK brings gRPC, OpenCensus and Google's
// auth libraries (about 200 packages, half of a cold build), which is why
// package massgen does not link it by default:
//
//	import _ "github.com/massgen/massgen/providers/gemini"
package gemini

import _ "github.com/massgen/massgen/internal/llm/gemini" // registers the backend type
