package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/massgen/massgen/internal/provider"
)

// Provider parameters are the backend keys that go into the provider
// request verbatim, as upstream passes them. The rule for a backend key
// that is neither a massgen key (type, model, cwd, ...) nor listed here:
//
//   - near a known key (typ → type, temprature → temperature): a typo. It is
//     warned about with a suggestion and NOT sent, because the provider
//     would reject it or, worse, quietly ignore it;
//   - otherwise: a provider parameter massgen has not heard of. It is sent
//     as is (upstream's behaviour), with a warning; writing it under
//     `extra_body` sends it without one. The Gemini adapter reads only the
//     parameters it knows, so there such a key is ignored (and listed by
//     IgnoredFeatures) unless it is under extra_body.
//
// A listed parameter with a value of the wrong type is an error: the
// request would fail at the provider, after the other agents spent tokens.
// Values are not checked beyond their type; the provider owns those rules
// (a new reasoning effort must not need a new massgen).
type paramKind int

const (
	paramNumber paramKind = iota
	paramInt
	paramBool
	paramString
	paramMap
	paramStringOrList
	paramStringList
	paramAny // tool_choice: a string or a map
)

type paramSpec struct {
	kind    paramKind
	example string // a valid value, for the error's suggestion
}

var providerParams = map[string]paramSpec{
	// sampling
	"temperature":        {paramNumber, "0.7"},
	"top_p":              {paramNumber, "0.9"},
	"top_k":              {paramInt, "40"},
	"min_p":              {paramNumber, "0.05"},
	"presence_penalty":   {paramNumber, "0.5"},
	"frequency_penalty":  {paramNumber, "0.5"},
	"repetition_penalty": {paramNumber, "1.1"},
	"seed":               {paramInt, "42"},
	"n":                  {paramInt, "1"},
	"logprobs":           {paramBool, ""},
	"top_logprobs":       {paramInt, "5"},
	"logit_bias":         {paramMap, "{\"50256\": -100}"},
	"stop":               {paramStringOrList, ""},
	"stop_sequences":     {paramStringOrList, ""},
	// output length (the Responses adapter renames the first two)
	"max_tokens":            {paramInt, "4096"},
	"max_completion_tokens": {paramInt, "4096"},
	"max_output_tokens":     {paramInt, "4096"},
	// reasoning and output shape
	"reasoning":            {paramMap, "{effort: medium}"},
	"reasoning_effort":     {paramString, "medium"},
	"text":                 {paramMap, "{verbosity: low}"},
	"verbosity":            {paramString, "low"},
	"thinking":             {paramMap, "{type: enabled, budget_tokens: 4096}"},
	"thinking_config":      {paramMap, "{thinking_budget: 1024}"},
	"include_thoughts":     {paramBool, ""},
	"thinking_budget":      {paramInt, "1024"},
	"thinking_level":       {paramString, "low"},
	"response_format":      {paramMap, "{type: json_object}"},
	"response_mime_type":   {paramString, "application/json"},
	"response_schema":      {paramMap, ""},
	"response_json_schema": {paramMap, ""},
	"modalities":           {paramStringList, ""},
	"include":              {paramStringList, ""},
	// tools
	"tool_choice":         {paramAny, ""},
	"parallel_tool_calls": {paramBool, ""},
	"max_tool_calls":      {paramInt, "10"},
	"web_search_options":  {paramMap, ""},
	"search_parameters":   {paramMap, "{mode: auto}"},
	// service options
	"service_tier":     {paramString, "auto"},
	"user":             {paramString, "\"me@example.com\""},
	"metadata":         {paramMap, ""},
	"prompt_cache_key": {paramString, ""},
	"truncation":       {paramString, "auto"},
	"betas":            {paramStringList, ""},
	"safety_settings":  {paramAny, ""},
	// inference servers (vLLM, SGLang)
	"chat_template_kwargs": {paramMap, "{enable_thinking: false}"},
	"separate_reasoning":   {paramBool, ""},
	// the escape hatch, merged into the request body unchecked
	"extra_body": {paramMap, "{top_a: 0.1}"},
	// Azure OpenAI connection (read by the CLI, never sent)
	"azure_endpoint": {paramString, "https://NAME.openai.azure.com"},
}

func isProviderParam(key string) bool {
	_, ok := providerParams[key]
	return ok
}

func (k paramKind) want() string {
	switch k {
	case paramNumber:
		return "a number"
	case paramInt:
		return "a whole number"
	case paramBool:
		return wantBool
	case paramString:
		return "a string"
	case paramMap:
		return "a map"
	case paramStringOrList:
		return "a string or a list of strings"
	case paramStringList:
		return "a list of strings"
	}
	return "a value"
}

func (k paramKind) accepts(n *node) bool {
	switch k {
	case paramNumber:
		return n.kind == kindInt || n.kind == kindFloat
	case paramInt:
		return n.kind == kindInt
	case paramBool:
		return n.kind == kindBool
	case paramString:
		return n.kind == kindString
	case paramMap:
		return n.kind == kindMap
	case paramStringOrList:
		return n.kind == kindString || isStringList(n)
	case paramStringList:
		return isStringList(n)
	}
	return true
}

func isStringList(n *node) bool {
	if n.kind != kindSeq {
		return false
	}
	for _, it := range n.items {
		if it.kind != kindString {
			return false
		}
	}
	return true
}

// param checks a known provider parameter and reports whether it is sent.
func (d *decoder) param(p *pair, key string) bool {
	if !d.present(key, p) {
		return false // null: dropped, as upstream drops None
	}
	spec := providerParams[p.key]
	if spec.kind.accepts(p.val) {
		return true
	}
	want := spec.kind.want()
	sugg := unquoteHint(p.val, want)
	if sugg == "" && spec.example != "" {
		sugg = fmt.Sprintf("e.g. %s: %s", p.key, spec.example)
	}
	d.fail(p.val.pos, key, fmt.Sprintf("must be %s, got %s", want, describe(p.val)), sugg)
	return false
}

// unknownBackendKey applies the rule above to a key no table knows.
func (d *decoder) unknownBackendKey(b *Backend, p *pair, key string) {
	if sugg := didYouMean(p.key, knownBackendKeys()); sugg != "" {
		d.ignore(p.keyPos, key, p.key, fmt.Sprintf("unknown backend key '%s' is ignored (it is not sent to the provider)", p.key), sugg)
		return
	}
	if spec, _ := provider.Lookup(b.Type); spec.Wire == provider.WireGemini {
		d.ignore(p.keyPos, key, p.key, fmt.Sprintf("'%s' is not a parameter the Gemini adapter knows; it is ignored", p.key),
			"to send it anyway, put it under extra_body with its REST name (camelCase)")
		return
	}
	d.warnAt(p.keyPos, key, fmt.Sprintf("'%s' is not a parameter massgen knows; it is sent to the provider as is", p.key),
		"if it is a typo, fix it; if it is a provider parameter, move it under extra_body to send it without this warning")
	if !p.val.isNull() {
		b.Params[p.key] = plain(p.val)
	}
}

// knownBackendKeys is every key a backend map may hold, for suggestions.
func knownBackendKeys() []string {
	keys := append(append(append([]string{"system_message"}, backendCoreKeys...), simKeys...), backendOwnedKeys...)
	// Sorted, so that a tie between two suggestions is decided the same way every time.
	return append(keys, slices.Sorted(maps.Keys(providerParams))...)
}
