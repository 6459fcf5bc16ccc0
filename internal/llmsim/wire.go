package llmsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Values of Record.Wire: the wire format a request came in.
const (
	WireChat      = "chat"      // OpenAI Chat Completions: POST /v1/chat/completions
	WireResponses = "responses" // OpenAI Responses: POST /v1/responses
	WireAnthropic = "anthropic" // Anthropic Messages: POST /v1/messages
	WireGemini    = "gemini"    // Gemini: POST /v1beta/models/{model}:generateContent | :streamGenerateContent
)

// request is a request as the policy, the pacing and the request log see
// it, whatever wire format it came in: each wire's decoder makes one, each
// wire's encoder renders the plan made from it.
type request struct {
	model    string
	stream   bool
	tools    []string  // function names offered, in order
	nTools   int       // tools of any kind (hosted ones too): 0 means a presentation
	voteEnum []string  // enum of the vote tool's agent_id
	messages []Message // the conversation, system prompt included, in Record form
	prompt   int       // estimated prompt tokens
	// results are the tool results after the last assistant message: what
	// the client sent back for the model's latest calls, for expect_results.
	results []toolResult
	// seed is the request's seed sampling parameter (0: none); a quality
	// scenario draws beliefs per seed.
	seed int64
	// jsonSchema: the request asked for JSON output with a schema.
	jsonSchema bool
}

// toolResult is one tool result with the name of the function it answers.
type toolResult struct {
	name, content string
}

// offers reports whether the request offers the function name, under its
// own name or, for a workflow tool, under a client's prefix (see
// workflowName).
func (r *request) offers(name string) bool { return r.offered(name) != "" }

// offered is the name under which the request offers the function name:
// name itself, or for a workflow or kit tool (kittools.go) the prefixed
// name a coding-agent CLI gives an MCP server's tool
// ("mcp__massgen__new_answer" in Claude Code, "mcp_massgen_new_answer" in
// Gemini CLI); "" when it is not offered.
func (r *request) offered(name string) string {
	for _, n := range r.tools {
		if n == name || workflowName(n) == name || kitName(n) == name {
			return n
		}
	}
	for _, n := range r.tools {
		if mcpTool(n, name) {
			return n
		}
	}
	return ""
}

// nameOf is the name to call the function name by: the one the request
// offers it under, else name itself.
func (r *request) nameOf(name string) string { return cmpOr(r.offered(name), name) }

// workflowTools are the tools whose calls are coordination actions.
var workflowTools = []string{"new_answer", "vote", "submit", "restart_orchestration", "stop", "submit_checklist"}

// workflowName is the workflow tool a function name stands for, under any
// prefix a client puts before an MCP tool's name ("<prefix>_new_answer";
// Copilot CLI's "massgen-new_answer"), or "" when it stands for none.
func workflowName(n string) string {
	for _, w := range workflowTools {
		if n == w || strings.HasSuffix(n, "_"+w) || strings.HasSuffix(n, "-"+w) {
			return w
		}
	}
	return ""
}

// scored reports whether the conversation has a submit_checklist call: a
// checklist-gated agent scores the answers once per turn, then acts.
func (r *request) scored() bool {
	for _, m := range r.messages {
		for _, n := range m.ToolCalls {
			if workflowName(n) == "submit_checklist" {
				return true
			}
		}
	}
	return false
}

// criterionLine is a criterion as massgen's checklist prompt lists it:
// "E2 [PRIMARY]: … ___/10".
var criterionLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(E\d+)\b[^\n]*___/10`) })

// checklistScores are the default policy's scores: every answer passes
// every criterion the prompt lists.
func (r *request) checklistScores() string {
	ids := []string{}
	for _, m := range r.messages {
		for _, g := range criterionLine().FindAllStringSubmatch(m.Content, -1) {
			if !slices.Contains(ids, g[1]) {
				ids = append(ids, g[1])
			}
		}
	}
	if len(ids) == 0 {
		ids = []string{"E1"}
	}
	labels := r.voteEnum
	if len(labels) == 0 {
		labels = []string{"agent1"}
	}
	if r.offers("stop") { // decomposition mode: one's own work, flat (stop.go)
		return flatScores(ids, r.reported())
	}
	scores := map[string]map[string]any{}
	for _, l := range labels {
		scores[l] = map[string]any{}
		for _, id := range ids {
			scores[l][id] = map[string]any{"score": 9, "reasoning": "simulated: " + l + " meets " + id}
		}
	}
	if r.reported() {
		return mustJSON(map[string]any{"scores": scores, "report_path": reportPath})
	}
	return mustJSON(map[string]any{"scores": scores})
}

// afterAction reports whether the request carries back the result of a
// workflow action the coordinator accepted or found stale: an agent with
// its own tool loop (a coding-agent CLI) asks its model once more after
// the action, and the turn is over, so the answer is a short text that
// consumes no scripted step. A rejection is not such a result: the model
// must correct it.
func (r *request) afterAction() bool {
	for _, res := range r.results {
		if workflowName(res.name) == "" {
			continue
		}
		c := res.content
		if strings.Contains(c, "Answer recorded") || strings.Contains(c, "Vote recorded") ||
			strings.Contains(c, "was not counted") || strings.Contains(c, "the turn is over") {
			return true
		}
	}
	return false
}

func (r *request) modelName() string { return r.model }

// lastUser is the latest user message that carries the task; see userTask.
func (r *request) lastUser() string {
	return userTask(len(r.messages), func(i int) (string, string) { return r.messages[i].Role, r.messages[i].Content })
}

// userTask returns the latest user message (of n, read with at) that
// carries the task — MassGen's <ORIGINAL MESSAGE> block — so corrective
// messages added after it do not become the "task"; without such a block,
// the latest user message.
func userTask(n int, at func(i int) (role, content string)) string {
	latest, found := "", false
	for i := n - 1; i >= 0; i-- {
		role, c := at(i)
		if role != "user" {
			continue
		}
		if strings.Contains(c, "<ORIGINAL MESSAGE>") {
			return c
		}
		if !found {
			latest, found = c, true
		}
	}
	return latest
}

// addTool records an offered function and, for vote, its agent_id enum.
func (r *request) addTool(name string, schema json.RawMessage) {
	r.tools = append(r.tools, name)
	if workflowName(name) == "vote" {
		r.voteEnum = voteEnum(schema)
	}
}

// conversation builds the messages of a request and counts the characters
// that make up the prompt estimate: message text, tool-call arguments and
// tool results, as providers bill them (roughly a token per four).
type conversation struct {
	msgs    []Message
	chars   int
	names   map[string]string // call id → function name
	results []toolResult      // since the last assistant message
}

func (c *conversation) add(m Message) {
	c.chars += len(m.Content)
	c.msgs = append(c.msgs, m)
	if m.Role == "assistant" {
		c.results = nil
	}
}

// call adds a tool call to the last message if it is the assistant's, else
// to a new assistant message.
func (c *conversation) call(id, name string, args int) {
	c.chars += args
	if c.names == nil {
		c.names = map[string]string{}
	}
	c.names[id] = name
	if n := len(c.msgs); n > 0 && c.msgs[n-1].Role == "assistant" {
		c.msgs[n-1].ToolCalls = append(c.msgs[n-1].ToolCalls, name)
		return
	}
	c.add(Message{Role: "assistant", ToolCalls: []string{name}})
}

// result adds a tool result for the call with this id; name is the
// function's name when the wire says it (Gemini), else the call's.
func (c *conversation) result(id, name, content string) {
	c.add(Message{Role: "tool", Content: content, ToolCallID: cmpOr(id, name)})
	c.results = append(c.results, toolResult{name: cmpOr(name, c.names[id]), content: content})
}

func (c *conversation) promptTokens() int { return max(c.chars/4, 1) }

// encoder renders a plan in one wire format. The exchange drives it (see
// exchange.stream): each method appends the bytes of zero or more events to
// b and returns it, and the exchange writes, paces and counts them, so every
// format streams the same tokens at the same times. An encoder belongs to one
// exchange and may keep state between calls.
type encoder interface {
	// headers sets the headers of a 200 response, streamed or not.
	headers(x *exchange, h http.Header, stream bool)
	// open is what goes out after TTFT, before the first token (the role
	// chunk, response.created, message_start; may be nothing).
	open(x *exchange, b []byte) []byte
	// textStart and textEnd frame the plan's text, when it has any.
	textStart(x *exchange, b []byte) []byte
	textEnd(x *exchange, b []byte) []byte
	// delta carries a fragment of the text (call < 0) or of the arguments of
	// tool call number call; last is set on the fragment that ends it.
	delta(x *exchange, b []byte, call int, frag string, last bool) []byte
	// callStart opens tool call i (it counts as one token), callEnd closes it.
	callStart(x *exchange, b []byte, i int) []byte
	callEnd(x *exchange, b []byte, i int) []byte
	// close ends a stream that ran to completion (finish reason, usage).
	close(x *exchange, b []byte) []byte
	// body is the whole non-streaming response, carrying total tokens.
	body(x *exchange, total int) []byte
}

// wireFormat is one wire format: how its requests are read, how its plans
// are rendered and how its errors look.
type wireFormat struct {
	name string
	// decode reads a request; the error text is what the client sees in its 400.
	decode func(r *http.Request, body []byte) (*request, encoder, error)
	// fail sends an error status in the wire's shape; msg "" means the
	// provider's usual message for the status, id 0 an unlogged request.
	fail func(w http.ResponseWriter, status int, msg, model string, retryAfter float64, id int)
}

// voteEnum reads properties.agent_id.enum of the vote tool's schema.
func voteEnum(params json.RawMessage) []string {
	var schema struct {
		Properties struct {
			AgentID struct {
				Enum []string `json:"enum"`
			} `json:"agent_id"`
		} `json:"properties"`
	}
	if json.Unmarshal(params, &schema) != nil {
		return nil
	}
	return schema.Properties.AgentID.Enum
}

// anyText accepts what the Responses and Messages APIs allow where text is
// expected: a string, null, or an array of parts, of which the text ones
// (text, input_text, output_text) are kept.
type anyText string

func (c *anyText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*c = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		*c = anyText(s)
		return err
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var s []byte
		for _, p := range parts {
			switch p.Type {
			case "text", "input_text", "output_text":
				s = append(s, p.Text...)
			}
		}
		*c = anyText(s)
		return nil
	}
	return errors.New("content must be a string or an array of content parts")
}

// isObject reports whether s is a JSON object, which is what Anthropic's
// tool_use input and Gemini's functionCall args must be.
func isObject(s string) bool {
	b := bytes.TrimSpace([]byte(s))
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// itemIndex is the position of tool call i among the items of a response
// (output items, content blocks): after the text, if there is any.
func itemIndex(x *exchange, i int) int {
	if x.p.text != "" {
		return i + 1
	}
	return i
}

// sseEvent appends a server-sent event with a name.
func sseEvent(b []byte, typ string, data []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// mustMarshal marshals one of the fixed response types, which cannot fail.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("llmsim: " + err.Error()) // only fixed struct types are marshalled
	}
	return b
}

// sendBody sends a JSON error or response body with its length.
func sendBody(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
