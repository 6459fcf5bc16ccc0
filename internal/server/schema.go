package server

// Structured output: a chat completion's response_format or a Response's
// text.format asks for a JSON answer, perhaps one conforming to a JSON
// Schema. The run is told so (RunRequest.Output: the winner's final
// presentation is instructed, and providers with structured output are
// asked for it), and the final answer is checked here before it is sent,
// so a client never gets an answer that does not parse as it asked.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// OutputFormat is the answer's shape a client asked for.
type OutputFormat struct {
	// Name is the schema's name (json_schema.name), "" for json_object.
	Name string
	// Schema is the JSON Schema the answer must conform to; nil asks for
	// any JSON object (json_object).
	Schema map[string]any
	Strict bool

	resolved *jsonschema.Resolved
}

// wireFormat is response_format (chat: the schema nested under
// json_schema) or text.format (Responses: flat) as clients send it.
type wireFormat struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Schema     json.RawMessage `json:"schema"`
	Strict     *bool           `json:"strict"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

// parseFormat reads a response_format / text.format value; "text" (or
// none) is nil. param names the field in errors.
func parseFormat(raw json.RawMessage, param string) (*OutputFormat, *Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var f wireFormat
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, badRequest(param, "invalid_value", "'%s' must be an object with a type (text, json_object or json_schema): %v", param, err)
	}
	switch f.Type {
	case "", "text":
		return nil, nil
	case "json_object":
		return &OutputFormat{}, nil
	case "json_schema":
	default:
		return nil, badRequest(param+".type", "invalid_value", "Unknown format type %q: use text, json_object or json_schema.", f.Type)
	}
	name, schema, strict := f.Name, f.Schema, f.Strict
	if f.JSONSchema != nil {
		name, schema, strict = f.JSONSchema.Name, f.JSONSchema.Schema, f.JSONSchema.Strict
	}
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, badRequest(param, "missing_schema", "A json_schema format needs its 'schema'.")
	}
	out := &OutputFormat{Name: name, Strict: strict != nil && *strict}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, badRequest(param, "invalid_schema", "The format's schema is not a JSON Schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, badRequest(param, "invalid_schema", "The format's schema cannot be used: %v", err)
	}
	out.resolved = rs
	_ = json.Unmarshal(schema, &out.Schema)
	return out, nil
}

// Instruction is what the final presentation is told about the format.
func (f *OutputFormat) Instruction() string {
	if f.Schema == nil {
		return "Answer with a single JSON object and nothing else: no prose, no Markdown code fence."
	}
	b, _ := json.Marshal(f.Schema)
	return "Answer with a single JSON value and nothing else (no prose, no Markdown code fence) that conforms to this JSON Schema:\n" + string(b)
}

// check returns the answer as the client gets it (a Markdown code fence
// around the JSON is taken off: models add one despite being told not to)
// or the error that says how it does not conform.
func (f *OutputFormat) check(answer string) (string, *Error) {
	text := unfence(answer)
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return "", schemaError("The team's final answer is not JSON, as the request's format asks: %v. The answer began: %q", err, clip(answer, 200))
	}
	if f.Schema == nil {
		if _, ok := v.(map[string]any); !ok {
			return "", schemaError("The team's final answer is JSON but not an object, as json_object asks. The answer began: %q", clip(answer, 200))
		}
		return text, nil
	}
	if err := f.resolved.Validate(v); err != nil {
		return "", schemaError("The team's final answer does not conform to the schema %q: %v. The answer began: %q", f.Name, err, clip(answer, 200))
	}
	return text, nil
}

// schemaError is 422, not a 5xx: OpenAI's SDKs retry 5xx responses, and
// a whole team run again is too dear a retry for a model that did not
// follow a schema.
func schemaError(format string, args ...any) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "final_answer_schema_mismatch", Type: "server_error",
		Message: fmt.Sprintf(format, args...)}
}

// unfence takes a Markdown code fence (```json … ```) off text, if the
// whole text is one.
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	t = strings.TrimSuffix(t[3:], "```")
	if nl := strings.IndexByte(t, '\n'); nl >= 0 && !strings.ContainsAny(t[:nl], "{[\"") {
		t = t[nl+1:] // the fence's language tag
	}
	return strings.TrimSpace(t)
}
