package provider

import (
	"fmt"
	"strings"

	"github.com/massgen/massgen/internal/suggest"
)

// Verdict is the one judgement of a backend block that `massgen config
// validate` and a run share, so that they never disagree and say it in
// the same words.
type Verdict struct {
	Key        string // the backend key at fault: "type", "model" or "base_url"
	Problem    string // "" when massgen can run the backend
	Suggestion string
}

// OK reports whether massgen can run the backend.
func (v Verdict) OK() bool { return v.Problem == "" }

// String is the verdict as one line: the problem, then the suggestion.
func (v Verdict) String() string {
	if v.Suggestion == "" {
		return v.Problem
	}
	return v.Problem + " — " + v.Suggestion
}

// unsupported says, per recognised kind this build cannot run, what to use
// instead.
var unsupported = map[string]string{
	"ag2": "give the agent a backend of its own, as massgen agents: each AG2 agent_config becomes an agent whose backend has the same model (type from its " +
		"llm_config's api_type: openai, claude, gemini, …) and whose system_message is the AG2 agent's; a group_config's " +
		"members become the team; an AG2 code executor becomes enable_mcp_command_line: true; AG2 agents themselves do not run in massgen",
}

// Judge decides whether massgen can run a backend of this type, model and
// base URL (the model and base URL as the config gives them).
func Judge(typ, model, baseURL string) Verdict {
	names := Names()
	spec, known := Lookup(typ)
	switch {
	case typ == "" && model != "":
		return Verdict{"type", fmt.Sprintf("backend has no 'type' and it cannot be inferred from model '%s'", model),
			"add 'type:', one of: " + strings.Join(names, ", ")}
	case typ == "":
		return Verdict{"type", "backend has no 'type'", "add 'type:', one of: " + strings.Join(names, ", ")}
	case !known:
		sugg := ""
		switch c := suggest.Closest(typ, names); {
		case c != "" && strings.EqualFold(c, typ):
			sugg = fmt.Sprintf("did you mean '%s'? (backend types are lowercase)", c)
		case c != "":
			sugg = fmt.Sprintf("did you mean '%s'?", c)
		default:
			sugg = "valid types: " + strings.Join(names, ", ")
		}
		return Verdict{"type", fmt.Sprintf("unknown backend type '%s'", typ), sugg}
	case !spec.Native:
		return Verdict{"type", fmt.Sprintf("backend type '%s' is recognised but not supported by this version yet", typ), unsupported[typ]}
	case model == "" && !spec.ModelOptional:
		return Verdict{"model", "backend has no 'model'", fmt.Sprintf("add 'model:' with the name of a %s model", typ)}
	case spec.NeedsBaseURL && baseURL == "":
		return Verdict{"base_url", fmt.Sprintf("backend type '%s' needs a 'base_url'", typ), "add 'base_url:' with the endpoint's URL"}
	}
	return Verdict{}
}
