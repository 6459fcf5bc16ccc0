package llmsim

import (
	"fmt"
	"net/http"
)

// StepContextOverflow is the Record.Step of a request refused for not
// fitting its model's context window (ModelScript.ContextWindow).
const StepContextOverflow = "context_length_exceeded"

// failOverflow refuses a request whose prompt (prompt tokens, as the
// simulator estimates them) does not fit the model's window, as each
// provider does: a 400 in its own words, with the window in them, and for
// OpenAI's wires the code context_length_exceeded.
func failOverflow(wf *wireFormat, w http.ResponseWriter, model string, prompt, window, id int) {
	code := StepContextOverflow
	switch wf.name {
	case WireChat:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages "+
			"resulted in %d tokens. Please reduce the length of the messages.", window, prompt),
			"invalid_request_error", &code, 0)
	case WireResponses:
		// OpenAI's own words, which name neither number.
		writeError(w, http.StatusBadRequest, "Your input exceeds the context window of this model. Please adjust your input and try again.",
			"invalid_request_error", &code, 0)
	case WireAnthropic:
		wf.fail(w, http.StatusBadRequest, fmt.Sprintf("prompt is too long: %d tokens > %d maximum", prompt, window), model, 0, id)
	default:
		wf.fail(w, http.StatusBadRequest, fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).",
			prompt, window), model, 0, id)
	}
}
