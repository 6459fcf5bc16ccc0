package gemini

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"google.golang.org/genai"
)

// applyParams maps the pass-through parameters Gemini understands onto the
// request config. Unknown keys are ignored, as MassGen ignores backend keys
// a provider has no use for; a known key with a value of the wrong type is
// an error, since sending the request without it would silently change the
// answer.
func applyParams(c *genai.GenerateContentConfig, params map[string]any) error {
	var err error
	get := func(key string) (any, bool) {
		v, ok := params[key]
		return v, ok && v != nil && err == nil
	}
	// fail records the first bad parameter.
	fail := func(key string, e error) {
		if e != nil && err == nil {
			err = fmt.Errorf("parameter %s: %w", key, e)
		}
	}
	float := func(key string, dst **float32) {
		if v, ok := get(key); ok {
			f, e := number(v)
			fail(key, e)
			*dst = genai.Ptr(float32(f))
		}
	}
	float("temperature", &c.Temperature)
	float("top_p", &c.TopP)
	float("top_k", &c.TopK)
	float("presence_penalty", &c.PresencePenalty)
	float("frequency_penalty", &c.FrequencyPenalty)
	for _, key := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		if v, ok := get(key); ok {
			n, e := integer(v)
			fail(key, e)
			c.MaxOutputTokens = n
		}
	}
	if v, ok := get("seed"); ok {
		n, e := integer(v)
		fail("seed", e)
		c.Seed = genai.Ptr(n)
	}
	for _, key := range []string{"stop", "stop_sequences"} {
		if v, ok := get(key); ok {
			s, e := strings1(v)
			fail(key, e)
			c.StopSequences = s
		}
	}
	if v, ok := get("response_mime_type"); ok {
		s, e := str(v)
		fail("response_mime_type", e)
		c.ResponseMIMEType = s
	}
	for _, key := range []string{"response_schema", "response_json_schema"} {
		if v, ok := get(key); ok {
			c.ResponseJsonSchema = normalize(v)
			if c.ResponseMIMEType == "" {
				c.ResponseMIMEType = "application/json"
			}
		}
	}
	if e := thinking(c, params); e != nil && err == nil {
		err = e
	}
	for _, t := range []struct {
		key  string
		tool *genai.Tool
	}{
		{"enable_web_search", &genai.Tool{GoogleSearch: &genai.GoogleSearch{}}},
		{"enable_code_execution", &genai.Tool{CodeExecution: &genai.ToolCodeExecution{}}},
	} {
		if v, ok := get(t.key); ok {
			on, isBool := v.(bool)
			if !isBool {
				fail(t.key, fmt.Errorf("want true or false, got %T", v))
			}
			if on {
				c.Tools = append(c.Tools, t.tool)
			}
		}
	}
	if v, ok := get("extra_body"); ok {
		m, isMap := normalize(v).(map[string]any)
		if !isMap {
			fail("extra_body", fmt.Errorf("want a map, got %T", v))
		} else if len(m) > 0 {
			c.HTTPOptions = &genai.HTTPOptions{ExtraBody: m}
		}
	}
	return err
}

// thinking builds the thinking config from a thinking_config map (snake or
// camel case keys, as in the Python SDK or the REST API) and the flat
// thinking_budget, thinking_level and include_thoughts keys, which win.
func thinking(c *genai.GenerateContentConfig, params map[string]any) error {
	fields := map[string]any{}
	if v := params["thinking_config"]; v != nil {
		m, ok := normalize(v).(map[string]any)
		if !ok {
			return fmt.Errorf("parameter thinking_config: want a map, got %T", v)
		}
		for k, v := range m {
			fields[snake(k)] = v
		}
	}
	for _, k := range []string{"thinking_budget", "thinking_level", "include_thoughts"} {
		if v := params[k]; v != nil {
			fields[k] = v
		}
	}
	if len(fields) == 0 {
		return nil
	}
	tc := &genai.ThinkingConfig{}
	if v := fields["thinking_budget"]; v != nil {
		n, err := integer(v)
		if err != nil {
			return fmt.Errorf("parameter thinking_budget: %w", err)
		}
		tc.ThinkingBudget = genai.Ptr(n)
	}
	if v := fields["thinking_level"]; v != nil {
		s, err := str(v)
		if err != nil {
			return fmt.Errorf("parameter thinking_level: %w", err)
		}
		tc.ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(s))
	}
	if v := fields["include_thoughts"]; v != nil {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("parameter include_thoughts: want true or false, got %T", v)
		}
		tc.IncludeThoughts = b
	}
	c.ThinkingConfig = tc
	return nil
}

// snake turns thinkingBudget into thinking_budget.
func snake(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// number accepts any Go numeric type (YAML and JSON decoders differ) and
// json.Number.
func number(v any) (float64, error) {
	if n, ok := v.(json.Number); ok {
		return n.Float64()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	}
	return 0, fmt.Errorf("want a number, got %T", v)
}

func integer(v any) (int32, error) {
	f, err := number(v)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, fmt.Errorf("want a whole number, got %v", v)
	}
	return int32(f), nil
}

func str(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("want a string, got %T", v)
	}
	return s, nil
}

// strings1 accepts one string or a list of them.
func strings1(v any) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return nil, fmt.Errorf("want a string or a list of strings, got %T", v)
	}
	out := make([]string, 0, rv.Len())
	for i := range rv.Len() {
		s, ok := rv.Index(i).Interface().(string)
		if !ok {
			return nil, fmt.Errorf("want a list of strings, item %d is %T", i, rv.Index(i).Interface())
		}
		out = append(out, s)
	}
	return out, nil
}

// normalize turns maps of any key type (YAML decoders may produce
// map[any]any) into map[string]any, recursively, so the SDK can encode them
// as JSON.
func normalize(v any) any {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			out[fmt.Sprint(it.Key().Interface())] = normalize(it.Value().Interface())
		}
		return out
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 { // []byte
			return v
		}
		out := make([]any, rv.Len())
		for i := range rv.Len() {
			out[i] = normalize(rv.Index(i).Interface())
		}
		return out
	}
	return v
}
