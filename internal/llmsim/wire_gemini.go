package llmsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// geminiWire is the Gemini API: POST /v1beta/models/{model}:generateContent
// and :streamGenerateContent?alt=sse (also under /v1/). The model comes from
// the path.
var geminiWire = &wireFormat{name: WireGemini, decode: decodeGemini, fail: failGemini}

// geminiPath splits "models/{model}:{action}" (the path after the version).
func geminiPath(rest string) (model, action string, ok bool) {
	m, found := strings.CutPrefix(rest, "models/")
	i := strings.LastIndexByte(m, ':')
	if !found || i <= 0 {
		return "", "", false
	}
	model, action = m[:i], m[i+1:]
	return model, action, action == "generateContent" || action == "streamGenerateContent"
}

// geminiRequest is the part of a GenerateContentRequest the simulator reads.
// Like Google's JSON parser it takes the snake_case spellings too.
type geminiRequest struct {
	Contents    []geminiContent `json:"contents"`
	System      *geminiContent  `json:"systemInstruction"`
	SystemSnake *geminiContent  `json:"system_instruction"`
	Tools       []geminiTool    `json:"tools"`
	Config      *geminiConfig   `json:"generationConfig"`
	ConfigSnake *geminiConfig   `json:"generation_config"`
}

// geminiConfig is the part of a GenerationConfig the simulator reads: a
// request for JSON output of a schema (Gemini CLI's model router and
// loop check ask for one).
type geminiConfig struct {
	MimeType        string          `json:"responseMimeType"`
	MimeTypeSnake   string          `json:"response_mime_type"`
	Schema          json.RawMessage `json:"responseSchema"`
	SchemaSnake     json.RawMessage `json:"response_schema"`
	JSONSchema      json.RawMessage `json:"responseJsonSchema"`
	JSONSchemaSnake json.RawMessage `json:"response_json_schema"`
}

// schema is the JSON schema the response must follow (nil: none).
func (c *geminiConfig) schema() json.RawMessage {
	if c == nil || cmpOr(c.MimeType, c.MimeTypeSnake) != "application/json" {
		return nil
	}
	for _, s := range []json.RawMessage{c.JSONSchema, c.JSONSchemaSnake, c.Schema, c.SchemaSnake} {
		if len(s) > 0 && string(s) != "null" {
			return s
		}
	}
	return json.RawMessage(`{}`)
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text         string        `json:"text"`
	Thought      bool          `json:"thought"`
	Call         *geminiCall   `json:"functionCall"`
	CallSnake    *geminiCall   `json:"function_call"`
	Response     *geminiResult `json:"functionResponse"`
	ResponseSnak *geminiResult `json:"function_response"`
}

type geminiCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type geminiResult struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type geminiTool struct {
	Decls      []geminiDecl `json:"functionDeclarations"`
	DeclsSnake []geminiDecl `json:"function_declarations"`
}

type geminiDecl struct {
	Name            string          `json:"name"`
	Parameters      json.RawMessage `json:"parameters"`
	JSONSchema      json.RawMessage `json:"parametersJsonSchema"`
	JSONSchemaSnake json.RawMessage `json:"parameters_json_schema"`
}

func firstOf[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func decodeGemini(r *http.Request, body []byte) (*request, encoder, error) {
	_, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/") // drop the version
	model, action, _ := geminiPath(rest)
	stream := action == "streamGenerateContent"
	if stream && r.URL.Query().Get("alt") != "sse" {
		return nil, nil, errors.New("the simulator serves streamGenerateContent as server-sent events only: add ?alt=sse")
	}
	gr := new(geminiRequest)
	if err := json.Unmarshal(body, gr); err != nil {
		return nil, nil, fmt.Errorf("Invalid JSON payload received. %v", err)
	}
	if len(gr.Contents) == 0 {
		return nil, nil, errors.New("* GenerateContentRequest.contents: contents is not specified")
	}
	req, err := gr.request(model, stream)
	if err != nil {
		return nil, nil, err
	}
	return req, &geminiEncoder{schema: firstOf(gr.Config, gr.ConfigSnake).schema()}, nil
}

// request is the wire-neutral form of a GenerateContentRequest.
func (gr *geminiRequest) request(model string, stream bool) (*request, error) {
	req := &request{model: model, stream: stream}
	for i, t := range gr.Tools {
		decls := t.Decls
		if decls == nil {
			decls = t.DeclsSnake
		}
		if len(decls) == 0 {
			req.nTools++ // googleSearch, codeExecution, ...
		}
		for j, d := range decls {
			if d.Name == "" {
				return nil, fmt.Errorf("* GenerateContentRequest.tools[%d].function_declarations[%d].name: Name is required", i, j)
			}
			schema := d.Parameters
			for _, alt := range []json.RawMessage{d.JSONSchema, d.JSONSchemaSnake} {
				if len(schema) == 0 {
					schema = alt
				}
			}
			req.addTool(d.Name, schema)
			req.nTools++
		}
	}
	var c conversation
	if sys := firstOf(gr.System, gr.SystemSnake); sys != nil {
		var text []byte
		for _, p := range sys.Parts {
			text = append(text, p.Text...)
		}
		c.add(Message{Role: "system", Content: string(text)})
	}
	for _, content := range gr.Contents {
		role := content.Role
		switch role {
		case "model":
			role = "assistant"
		case "", "function":
			role = "user"
		}
		var text []byte
		hasText := false
		for _, p := range content.Parts {
			if res := firstOf(p.Response, p.ResponseSnak); res != nil {
				c.result(res.ID, res.Name, string(res.Response))
			} else if p.Text != "" && !p.Thought {
				text, hasText = append(text, p.Text...), true
			}
		}
		if hasText || role == "assistant" {
			c.add(Message{Role: role, Content: string(text)})
		}
		for _, p := range content.Parts {
			if call := firstOf(p.Call, p.CallSnake); call != nil {
				c.call(call.ID, call.Name, len(call.Args))
			}
		}
	}
	req.messages, req.prompt, req.results = c.msgs, c.promptTokens(), c.results
	return req, nil
}

// isGeminiCount reports whether path is a Gemini countTokens call
// (POST /v1beta/models/{model}:countTokens, or under /v1/).
func isGeminiCount(path string) bool {
	for _, v := range []string{"/v1beta/", "/v1/"} {
		if rest, ok := strings.CutPrefix(path, v); ok {
			m, found := strings.CutPrefix(rest, "models/")
			name, ok := strings.CutSuffix(m, ":countTokens")
			return found && ok && name != ""
		}
	}
	return false
}

// serveGeminiCount answers countTokens (Gemini CLI counts an image's
// tokens this way) with the prompt estimate of the contents, or of the
// generateContentRequest, counted as a generation's prompt is. It uses no
// scripted step and is not recorded: it generates nothing.
func serveGeminiCount(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var cr struct {
		Contents     []geminiContent `json:"contents"`
		Request      *geminiRequest  `json:"generateContentRequest"`
		RequestSnake *geminiRequest  `json:"generate_content_request"`
	}
	if err == nil {
		err = json.Unmarshal(body, &cr)
	}
	if err != nil {
		failGemini(w, http.StatusBadRequest, fmt.Sprintf("Invalid JSON payload received. %v", err), "", 0, 0)
		return
	}
	gr := firstOf(cr.Request, cr.RequestSnake)
	if gr == nil {
		gr = &geminiRequest{Contents: cr.Contents}
	}
	if len(gr.Contents) == 0 {
		failGemini(w, http.StatusBadRequest, "* CountTokensRequest.contents: contents is not specified", "", 0, 0)
		return
	}
	req, err := gr.request("", false)
	if err != nil {
		failGemini(w, http.StatusBadRequest, err.Error(), "", 0, 0)
		return
	}
	sendBody(w, http.StatusOK, "application/json; charset=UTF-8", mustMarshal(struct {
		TotalTokens int `json:"totalTokens"`
	}{req.prompt}))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// geminiEncoder renders a plan as GenerateContentResponses, shaped like the
// recordings in reference/provider-recordings/TestGoogleCommon: streamed, a
// chunk per text fragment and one per function call (Gemini sends a call
// whole, its args an object: the argument tokens are paced and counted as
// for the other wires, and the call goes out when the last one is due),
// each with the usage so far, the last one with finishReason STOP; or one
// response. Arguments that are not a JSON object (malformed_tool_json, a
// scripted call's broken arguments) cannot be sent: as the real API does
// when a model garbles a call, the candidate ends with finishReason
// MALFORMED_FUNCTION_CALL and a finishMessage instead.
//
// A request for JSON output (responseMimeType application/json) gets, in
// place of a text that is not JSON, an instance of its response schema
// (see schemaInstance).
type geminiEncoder struct {
	buf    []byte          // reused part buffer
	done   bool            // the chunk with the finish reason went out
	schema json.RawMessage // the response schema of a JSON-output request
}

// shape makes a JSON-output request's text an instance of its schema,
// before any of it is sent.
func (e *geminiEncoder) shape(x *exchange) {
	if e.schema == nil || len(x.p.calls) > 0 || x.p.status > 0 || json.Valid([]byte(x.p.text)) {
		return
	}
	x.p.text = string(mustMarshal(schemaInstance(e.schema, x.req.model)))
}

func (e *geminiEncoder) headers(x *exchange, h http.Header, stream bool) {
	e.shape(x)
	if stream {
		h.Set("Content-Type", "text/event-stream")
	} else {
		h.Set("Content-Type", "application/json; charset=UTF-8")
	}
}

func (e *geminiEncoder) open(_ *exchange, b []byte) []byte {
	e.buf = make([]byte, 0, 256)
	return b
}

func (e *geminiEncoder) textStart(_ *exchange, b []byte) []byte        { return b }
func (e *geminiEncoder) textEnd(_ *exchange, b []byte) []byte          { return b }
func (e *geminiEncoder) callStart(_ *exchange, b []byte, _ int) []byte { return b }

func (e *geminiEncoder) delta(x *exchange, b []byte, call int, frag string, last bool) []byte {
	if call >= 0 {
		return b // the call goes out whole in callEnd
	}
	e.buf = append(e.buf[:0], `{"text":"`...)
	e.buf = appendEscaped(e.buf, frag)
	e.buf = append(e.buf, `"}`...)
	finish := ""
	if last && len(x.p.calls) == 0 {
		finish, e.done = "STOP", true
	}
	return e.chunk(x, b, e.buf, finish, "", x.tokens+countTokens(frag))
}

func (e *geminiEncoder) callEnd(x *exchange, b []byte, i int) []byte {
	if e.done {
		return b
	}
	c := x.p.calls[i]
	if !isObject(c.args) {
		e.done = true
		return e.chunk(x, b, nil, "MALFORMED_FUNCTION_CALL", malformedMessage(c), x.tokens)
	}
	e.buf = appendCallPart(e.buf[:0], c)
	finish := ""
	if i == len(x.p.calls)-1 {
		finish, e.done = "STOP", true
	}
	return e.chunk(x, b, e.buf, finish, "", x.tokens)
}

func (e *geminiEncoder) close(x *exchange, b []byte) []byte {
	if e.done {
		return b
	}
	return e.chunk(x, b, []byte(`{"text":""}`), "STOP", "", x.tokens)
}

func appendCallPart(b []byte, c toolCall) []byte {
	b = append(b, `{"functionCall":{"name":"`...)
	b = appendEscaped(b, c.name)
	b = append(b, `","args":`...)
	var args bytes.Buffer
	_ = json.Compact(&args, []byte(c.args)) // valid: checked by isObject
	b = append(b, args.Bytes()...)
	return append(b, "}}"...)
}

func malformedMessage(c toolCall) string {
	return "Malformed function call: " + c.name + " " + c.args
}

// chunk appends one streamed GenerateContentResponse with at most one part.
func (e *geminiEncoder) chunk(x *exchange, b, part []byte, finish, finishMsg string, tokens int) []byte {
	b = append(b, `data: {"candidates":[{`...)
	if part != nil {
		b = append(b, `"content":{"parts":[`...)
		b = append(b, part...)
		b = append(b, `],"role":"model"},`...)
	} else {
		b = append(b, `"content":{},`...)
	}
	if finish != "" {
		b = append(b, `"finishReason":"`...)
		b = append(b, finish...)
		b = append(b, `",`...)
	}
	b = append(b, `"index":0`...)
	if finishMsg != "" {
		b = append(b, `,"finishMessage":"`...)
		b = appendEscaped(b, finishMsg)
		b = append(b, '"')
	}
	b = append(b, `}],"usageMetadata":`...)
	b = append(b, mustMarshal(newGeminiUsage(x.req.prompt, tokens))...)
	b = append(b, `,"modelVersion":"`...)
	b = appendEscaped(b, x.req.model)
	b = append(b, `","responseId":"`...)
	b = append(b, geminiResponseID(x.id)...)
	return append(b, "\"}\r\n\r\n"...)
}

// body is the whole GenerateContentResponse.
func (e *geminiEncoder) body(x *exchange, total int) []byte {
	if e.schema != nil {
		e.shape(x)
		total = x.p.tokens()
	}
	cand := geminiCandidate{Content: &geminiOutContent{Role: "model"}, FinishReason: "STOP"}
	if x.p.text != "" {
		cand.Content.Parts = append(cand.Content.Parts, mustMarshal(struct {
			Text string `json:"text"`
		}{x.p.text}))
	}
	for _, c := range x.p.calls {
		if !isObject(c.args) {
			cand.FinishReason, cand.FinishMessage = "MALFORMED_FUNCTION_CALL", malformedMessage(c)
			if len(cand.Content.Parts) == 0 {
				cand.Content = &geminiOutContent{}
			}
			break
		}
		cand.Content.Parts = append(cand.Content.Parts, appendCallPart(nil, c))
	}
	if len(x.p.text) == 0 && len(x.p.calls) == 0 {
		cand.Content.Parts = append(cand.Content.Parts, json.RawMessage(`{"text":""}`))
	}
	return mustMarshal(struct {
		Candidates    []geminiCandidate `json:"candidates"`
		UsageMetadata geminiUsage       `json:"usageMetadata"`
		ModelVersion  string            `json:"modelVersion"`
		ResponseID    string            `json:"responseId"`
	}{[]geminiCandidate{cand}, newGeminiUsage(x.req.prompt, total), x.req.model, geminiResponseID(x.id)})
}

type geminiCandidate struct {
	Content       *geminiOutContent `json:"content"`
	FinishReason  string            `json:"finishReason"`
	Index         int               `json:"index"`
	FinishMessage string            `json:"finishMessage,omitempty"`
}

type geminiOutContent struct {
	Parts []json.RawMessage `json:"parts,omitempty"`
	Role  string            `json:"role,omitempty"`
}

type geminiUsage struct {
	PromptTokenCount     int `json:"promptTokenCount"`
	CandidatesTokenCount int `json:"candidatesTokenCount"`
	TotalTokenCount      int `json:"totalTokenCount"`
	PromptTokensDetails  []struct {
		Modality   string `json:"modality"`
		TokenCount int    `json:"tokenCount"`
	} `json:"promptTokensDetails"`
}

func newGeminiUsage(prompt, out int) geminiUsage {
	u := geminiUsage{PromptTokenCount: prompt, CandidatesTokenCount: out, TotalTokenCount: prompt + out}
	u.PromptTokensDetails = append(u.PromptTokensDetails, struct {
		Modality   string `json:"modality"`
		TokenCount int    `json:"tokenCount"`
	}{"TEXT", prompt})
	return u
}

func geminiResponseID(id int) string { return fmt.Sprintf("sim%06d", id) }

// googleStatus returns the canonical status name and the usual message of
// the Gemini API for an HTTP status.
func googleStatus(status int, model string) (name, msg string) {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT", "Request contains an invalid argument."
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED", "API key not valid. Please pass a valid API key."
	case http.StatusForbidden:
		return "PERMISSION_DENIED", "The caller does not have permission (simulated)."
	case http.StatusNotFound:
		return "NOT_FOUND", fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for generateContent.", model)
	case http.StatusConflict:
		return "ABORTED", "The operation was aborted (simulated)."
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED", "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. (simulated)"
	case 499:
		return "CANCELLED", "The operation was cancelled."
	case http.StatusNotImplemented:
		return "UNIMPLEMENTED", "Method not implemented (simulated)."
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE", "The model is overloaded. Please try again later."
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED", "Deadline expired before operation could complete."
	}
	if status >= 500 {
		return "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
	}
	return "INVALID_ARGUMENT", fmt.Sprintf("Simulated client error %d.", status)
}

// failGemini sends an error in Google's shape. With a retry delay it adds a
// google.rpc.RetryInfo detail, where Google puts it, and retry-after.
func failGemini(w http.ResponseWriter, status int, msg, model string, retryAfter float64, _ int) {
	name, usual := googleStatus(status, model)
	if msg == "" {
		msg = usual
	}
	type detail struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	}
	var e struct {
		Error struct {
			Code    int      `json:"code"`
			Message string   `json:"message"`
			Status  string   `json:"status"`
			Details []detail `json:"details,omitempty"`
		} `json:"error"`
	}
	e.Error.Code, e.Error.Message, e.Error.Status = status, msg, name
	if retryAfter > 0 {
		e.Error.Details = []detail{{"type.googleapis.com/google.rpc.RetryInfo", strconv.FormatFloat(retryAfter, 'f', -1, 64) + "s"}}
	}
	setRetryAfter(w.Header(), retryAfter)
	sendBody(w, status, "application/json; charset=UTF-8", mustMarshal(e))
}

// schemaInstance is a value that satisfies a JSON schema (or a Gemini
// Schema, whose types are upper case): every property of an object, the
// first choice of an enum, anyOf or oneOf, the minimum of a number, one
// item of an array, a short text for a string.
func schemaInstance(raw json.RawMessage, model string) any {
	var s struct {
		Type       json.RawMessage            `json:"type"`
		Enum       []any                      `json:"enum"`
		Const      any                        `json:"const"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		AnyOf      []json.RawMessage          `json:"anyOf"`
		OneOf      []json.RawMessage          `json:"oneOf"`
		Minimum    *float64                   `json:"minimum"`
		MinItems   int                        `json:"minItems"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	switch {
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case len(s.AnyOf) > 0:
		return schemaInstance(s.AnyOf[0], model)
	case len(s.OneOf) > 0:
		return schemaInstance(s.OneOf[0], model)
	}
	typ := ""
	var types []string
	if json.Unmarshal(s.Type, &typ) != nil && json.Unmarshal(s.Type, &types) == nil {
		for _, t := range types {
			if !strings.EqualFold(t, "null") {
				typ = t
				break
			}
		}
	}
	if typ == "" && s.Properties != nil {
		typ = "object"
	}
	switch strings.ToLower(typ) {
	case "object":
		obj := map[string]any{}
		for k, v := range s.Properties {
			obj[k] = schemaInstance(v, model)
		}
		return obj
	case "array":
		n := max(s.MinItems, 1)
		if len(s.Items) == 0 {
			return make([]any, 0)
		}
		items := make([]any, n)
		for i := range items {
			items[i] = schemaInstance(s.Items, model)
		}
		return items
	case "integer":
		if s.Minimum != nil {
			return int64(*s.Minimum)
		}
		return 1
	case "number":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 1
	case "boolean":
		return false
	case "null":
		return nil
	}
	return "[sim model " + model + "] simulated value"
}
