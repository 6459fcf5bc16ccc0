package llm

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// ContextOverflow reports whether err is a provider refusing a request
// because its input does not fit the model's context window, and the
// window in tokens when the provider said it (0 when not). Providers say
// it each their own way, always as a 400 or 413 (upstream MassGen's
// _context_errors.py lists the same):
//
//   - OpenAI, Groq, xAI and most OpenAI-compatible servers: code
//     context_length_exceeded, "This model's maximum context length is N
//     tokens…" or, in the Responses API, "Your input exceeds the context
//     window of this model…";
//   - Anthropic: "prompt is too long: M tokens > N maximum" (400), or
//     request_too_large (413);
//   - Gemini: "The input token count (M) exceeds the maximum number of
//     tokens allowed (N)." (400 INVALID_ARGUMENT);
//   - Mistral, OpenRouter, vLLM, llama.cpp: "…maximum context length…",
//     "exceeds the available context size", "too many tokens".
//
// The agent then compacts its conversation and tries once more instead of
// ending: a long tool loop outgrowing the window is not a bad request the
// same conversation could never fix.
func ContextOverflow(err error) (window int, ok bool) {
	pe, isProvider := errors.AsType[*Error](err)
	if !isProvider || (pe.Status != 400 && pe.Status != 413) {
		return 0, false
	}
	msg := strings.ToLower(pe.Message + " " + errText(pe.Err))
	if !overflowWords().MatchString(msg) {
		return 0, false
	}
	for _, re := range overflowWindows() {
		if m := re.FindStringSubmatch(msg); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				return n, true
			}
		}
	}
	return 0, true
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// overflowWords and overflowWindows compile on first use, not at the init
// of every process (start-up; TestOwnPackagesInitLittle).
var overflowWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`context_length_exceeded|context length|context window|context size|prompt is too long|` +
		`request_too_large|input token count \(\d+\) exceeds|too many tokens|input is too long|reduce the length of the (messages|input)`)
})

// overflowWindows find the window in the providers' messages.
var overflowWindows = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`maximum context length is (\d+)`),
		regexp.MustCompile(`tokens? > (\d+) maximum`),
		regexp.MustCompile(`maximum number of tokens allowed \((\d+)\)`),
		regexp.MustCompile(`context (?:window|size|length) (?:of|is) (\d+)`),
	}
})
