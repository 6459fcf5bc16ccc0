package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/massgen/massgen/internal/provider"
)

// Provider parameters are the backend keys that go into the provider
// request verbatim. The rule is an allowlist per wire API: a backend key
// reaches the provider only if it is a documented parameter of the API its
// type speaks (familyParams), or is written under `extra_body`, the user's
// explicit "send this as is". Everything else stays out of the request:
//
//   - a parameter of another API (stop_sequences on Chat Completions,
//     reasoning_effort on the Responses API) is warned about, with the name
//     this API uses where there is one;
//   - a key nobody knows is warned about (with a did-you-mean when it is
//     near a known key) and never sent: upstream MassGen passes such keys
//     through, and a real provider refuses the request (or, worse, quietly
//     ignores them), far from the config that caused it.
//
// Both are listed by IgnoredFeatures. A listed parameter with a value of the
// wrong type is an error: the request would fail at the provider, after the
// other agents spent tokens. Values are not checked beyond their type; the
// provider owns those rules (a new reasoning effort must not need a new
// massgen).
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
	"chat_template_kwargs":   {paramMap, "{enable_thinking: false}"},
	"separate_reasoning":     {paramBool, ""},
	"prompt_cache_retention": {paramString, "24h"},
	"safety_identifier":      {paramString, ""},
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

// apiFamily is one wire API's allowlist.
type apiFamily struct {
	name   string
	params []string
	// renames name this API's parameter for another API's ("stop" →
	// "stop_sequences"), for the warning's suggestion.
	renames map[string]string
}

// familyParams are the parameters each wire API is sent, as its adapter
// (internal/llm/*) passes or reads them and the provider documents them.
// extra_body is everyone's; azure_endpoint is read by the Chat Completions
// adapter (Azure) and never sent.
var familyParams = map[provider.Wire]apiFamily{
	provider.WireChat: chatFamily,
	provider.WireSim:  chatFamily,
	// https://platform.openai.com/docs/api-reference/responses/create; the
	// adapter renames max_tokens and max_completion_tokens.
	provider.WireResponses: {name: "OpenAI Responses", params: []string{
		"temperature", "top_p", "max_output_tokens", "max_tokens", "max_completion_tokens", "reasoning", "text",
		"include", "tool_choice", "parallel_tool_calls", "max_tool_calls", "top_logprobs", "service_tier", "user",
		"metadata", "prompt_cache_key", "prompt_cache_retention", "safety_identifier", "truncation", "extra_body",
	}, renames: map[string]string{"reasoning_effort": "reasoning: {effort: …}", "verbosity": "text: {verbosity: …}"}},
	// https://docs.anthropic.com/en/api/messages; the adapter reads
	// max_tokens and turns betas into the anthropic-beta header.
	provider.WireAnthropic: {name: "Anthropic Messages", params: []string{
		"temperature", "top_p", "top_k", "max_tokens", "stop_sequences", "thinking", "metadata", "tool_choice",
		"service_tier", "betas", "extra_body",
	}, renames: map[string]string{"stop": "stop_sequences", "max_output_tokens": "max_tokens", "max_completion_tokens": "max_tokens"}},
	// what the Gemini adapter reads (internal/llm/gemini/params.go); it
	// sends nothing else.
	provider.WireGemini: {name: "Gemini", params: []string{
		"temperature", "top_p", "top_k", "presence_penalty", "frequency_penalty", "max_tokens", "max_completion_tokens",
		"max_output_tokens", "seed", "stop", "stop_sequences", "response_mime_type", "response_schema",
		"response_json_schema", "thinking_config", "include_thoughts", "thinking_budget", "thinking_level", "extra_body",
	}, renames: map[string]string{"thinking": "thinking_config", "reasoning_effort": "thinking_level"}},
}

// chatFamily is OpenAI Chat Completions and the servers compatible with it
// (vLLM, SGLang, OpenRouter, Groq, Z.ai, …), whose extensions massgen knows
// (top_k, min_p, repetition_penalty, chat_template_kwargs, reasoning,
// thinking, search_parameters) are in it.
var chatFamily = apiFamily{name: "Chat Completions", params: []string{
	"temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty", "seed",
	"n", "logprobs", "top_logprobs", "logit_bias", "stop", "max_tokens", "max_completion_tokens", "reasoning_effort",
	"reasoning", "verbosity", "thinking", "response_format", "modalities", "tool_choice", "parallel_tool_calls",
	"web_search_options", "search_parameters", "service_tier", "user", "metadata", "prompt_cache_key",
	"prompt_cache_retention", "safety_identifier", "chat_template_kwargs", "separate_reasoning", "extra_body",
	"azure_endpoint",
}, renames: map[string]string{"stop_sequences": "stop", "max_output_tokens": "max_tokens", "thinking_config": "reasoning_effort"}}

// sentTo reports whether a known provider parameter is one the backend
// type's API takes, and warns when it is not. Types that massgen cannot
// run (claude_code, ag2, unknown ones) have no API here: their backend is
// refused as a whole, so their parameters are not judged one by one.
func (d *decoder) sentTo(typ string, p *pair, key string) bool {
	spec, _ := provider.Lookup(typ)
	fam, ok := familyParams[spec.Wire]
	if !ok || slices.Contains(fam.params, p.key) {
		return true
	}
	sugg := "if your server takes it, put it under extra_body to send it as is"
	if to, ok := fam.renames[p.key]; ok {
		sugg = fmt.Sprintf("the %s API calls it %s", fam.name, to)
	}
	d.ignore(p.keyPos, key, p.key, fmt.Sprintf("'%s' is not a parameter of the %s API (backend type %s); it is not sent", p.key, fam.name, typ), sugg)
	return false
}

// unknownBackendKey applies the rule above to a key no table knows: it is
// never sent.
func (d *decoder) unknownBackendKey(b *Backend, p *pair, key string) {
	sugg := didYouMean(p.key, knownBackendKeys())
	if sugg == "" {
		sugg = "if it is a parameter of the provider's API, put it under extra_body to send it as is"
		if spec, _ := provider.Lookup(b.Type); spec.Wire == provider.WireGemini {
			sugg += " (with its REST name, in camelCase)"
		}
	}
	d.ignore(p.keyPos, key, p.key, fmt.Sprintf("unknown backend key '%s' is ignored: massgen does not know it, so it is not sent to the provider", p.key), sugg)
	if !p.val.isNull() {
		b.Extra[p.key] = plain(p.val)
	}
}

// knownBackendKeys is every key a backend map may hold, for suggestions.
func knownBackendKeys() []string {
	keys := append(append(append([]string{"system_message"}, backendCoreKeys...), simKeys...), backendOwnedKeys...)
	// Sorted, so that a tie between two suggestions is decided the same way every time.
	return append(keys, slices.Sorted(maps.Keys(providerParams))...)
}
