package llmsim

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/massgen/massgen/internal/inputlimit"
)

// Scenario scripts the simulator. It is usually loaded from a YAML file (see
// the package documentation for an example); the zero value and nil both mean
// "default policy for every model".
type Scenario struct {
	Defaults ModelScript            `yaml:"defaults"`
	Models   map[string]ModelScript `yaml:"models"` // key = model name in the request; "*" matches any
	// Quality, when set, makes models right on a dataset's items at known
	// rates (quality.go).
	Quality *Quality `yaml:"quality"`
}

// ModelScript is what one model does. Settings are looked up field by field
// in the model's own entry, then in Models["*"], then in Defaults, so a
// scenario can set the pace once and script only the interesting models.
type ModelScript struct {
	TTFTMillis      *int     `yaml:"ttft_ms"`           // time to first token; default 0
	TokensPerSecond *float64 `yaml:"tokens_per_second"` // 0/absent = as fast as possible
	// Steps are consumed in order, one per request to this model; after they
	// run out, the default policy applies. Every model name has its own cursor,
	// even when the steps come from "*" or Defaults.
	Steps  []Step `yaml:"steps"`
	Final  string `yaml:"final"`  // text for requests that offer no tools (final presentation), when no step applies (template: {answer} presented, {model}, {question})
	Answer string `yaml:"answer"` // text for new_answer under the default policy (template: {model}, {n} = answer number, {question})
	// VoteReason is the reason of the default policy's votes (template:
	// {label}, the answer voted for, {model} and {question}); default
	// "simulated vote: {label} is complete".
	VoteReason string `yaml:"vote_reason"`
	Always     *Step  `yaml:"always"` // if set, every request gets this step (e.g. a permanent 401); never consumed
	// IgnoreTools makes the model blind to the tools a request offers, as
	// a chat template without tool support is (SmolLM2's under llama.cpp):
	// the request is planned and recorded as if it offered none, and
	// GET /props?model=… says supports_tool_calls: false.
	IgnoreTools *bool `yaml:"ignore_tools"`
	// ContextWindow is the model's window in prompt tokens: a request whose
	// prompt is larger is refused with the provider's context-overflow
	// 400 (StepContextOverflow) and consumes no step. 0/absent: no limit.
	ContextWindow *int `yaml:"context_window"`
}

// Step is one scripted response. At most one action (Answer, Vote, Submit,
// Restart, Calls, Fault) may be set. Text may accompany any of them: with a
// tool action it is streamed as content before the tool call (as some real
// models do), with "no_tool_call", "cut" or "hang" it is the text that is
// streamed, with an HTTP status fault it is the error message. A step with no
// action and no Text is consumed and answered by the default policy.
type Step struct {
	Answer     string  `yaml:"answer"` // call new_answer{content: Answer}; {model}, {n} and {question} are expanded
	Vote       string  `yaml:"vote"`   // call vote{agent_id: Vote, reason: Reason}
	Reason     string  `yaml:"reason"`
	Text       string  `yaml:"text"`        // plain assistant text, no tool call
	Submit     bool    `yaml:"submit"`      // call submit{confirmed: true}
	Restart    string  `yaml:"restart"`     // call restart_orchestration{reason: Restart, instructions: Reason}
	Calls      []Call  `yaml:"calls"`       // arbitrary tool calls in one response
	Fault      string  `yaml:"fault"`       // HTTP status ("429", "500", ...) | cut | malformed_tool_json | no_tool_call | hang
	RetryAfter float64 `yaml:"retry_after"` // seconds, sent as retry-after (and retry-after-ms) on status faults
	TTFTMillis *int    `yaml:"ttft_ms"`     // per-step override (also delays status faults when set)
	// When restricts the step to one kind of request: "coordination" (offers
	// new_answer), "presentation" (offers no tools), "evaluation" (offers
	// submit or restart_orchestration, but not new_answer) or "" (any). A
	// queued step whose When does not match stays queued and the default
	// policy answers this request; only the head of the queue is considered.
	When string `yaml:"when"`
	// ExpectResults checks the tool results the request carries back for
	// the model's latest calls before the step's action is sent; a request
	// that does not match is answered with a 400 that says why (see
	// Record.Problem). It combines with any action.
	ExpectResults []Expect `yaml:"expect_results"`
}

// Expect is one expected tool result: one for a call of the function Name
// ("" = any) whose text contains Contains. Each result satisfies at most
// one expectation, so two expectations for "add" need two results.
type Expect struct {
	Name     string `yaml:"name"`
	Contains string `yaml:"contains"`
}

// Call is one arbitrary tool call. Arguments is raw JSON text and is sent
// as is, unvalidated, so a scenario can also send broken arguments to any tool.
type Call struct {
	Name      string `yaml:"name"`
	Arguments string `yaml:"arguments"`
}

// Values of Step.When.
const (
	WhenCoordination = "coordination"
	WhenPresentation = "presentation"
	WhenEvaluation   = "evaluation"
)

// LoadScenario reads and validates a scenario file. Errors name the file and
// the line and column of the offending value ("sim.yaml:12:14: ...").
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llmsim: read scenario: %w", err)
	}
	return parseScenario(path, filepath.Dir(path), data)
}

// ParseScenario parses and validates scenario YAML. Errors carry the line and
// column ("scenario:12:14: ...").
func ParseScenario(data []byte) (*Scenario, error) {
	return parseScenario("scenario", "", data)
}

// ParseScenarioIn is ParseScenario for a scenario written inside a file of
// dir (a config's inline scenario): its relative paths are dir's.
func ParseScenarioIn(dir string, data []byte) (*Scenario, error) {
	return parseScenario("scenario", dir, data)
}

// scenarioLimits are a config's but for size: scripted answers can be long.
var scenarioLimits = func() inputlimit.Limits {
	l := inputlimit.Config
	l.What, l.MaxBytes, l.Usual = "scenario", 4<<20, "scenarios need fewer than 10"
	return l
}()

func parseScenario(name, dir string, data []byte) (*Scenario, error) {
	// Bounded before goccy sees it, as a config is: a scenario file is the
	// user's, but a deep or aliased one ("billion laughs") must cost an
	// error, not the machine's memory.
	if err := inputlimit.CheckYAML(data, name, scenarioLimits); err != nil {
		return nil, err
	}
	sc := new(Scenario)
	// Unknown keys are errors: a typo such as "tft_ms" would otherwise be a
	// silently ignored setting and a confusing test.
	if err := yaml.UnmarshalWithOptions(data, sc, yaml.DisallowUnknownField()); err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
			p := ye.GetToken().Position
			return nil, fmt.Errorf("%s:%d:%d: %s", name, p.Line, p.Column, ye.GetMessage())
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if fe := sc.validate(); fe != nil {
		line, col := 0, 0
		if f, err := parser.ParseBytes(data, 0); err == nil {
			line, col = position(f, fe.path)
		}
		if line > 0 {
			return nil, fmt.Errorf("%s:%d:%d: %s: %s", name, line, col, fe.pathString(), fe.msg)
		}
		return nil, fmt.Errorf("%s: %s: %s", name, fe.pathString(), fe.msg)
	}
	if sc.Quality != nil {
		if err := sc.Quality.load(dir); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return sc, nil
}

// fieldError is a validation error with the YAML path of the bad value, so
// that the parser can point at its line.
type fieldError struct {
	path []any // string keys and int indices
	msg  string
}

func (fe *fieldError) pathString() string {
	var b strings.Builder
	for _, p := range fe.path {
		switch p := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(p) + "]")
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

func (sc *Scenario) validate() *fieldError {
	if sc.Quality != nil {
		if fe := sc.Quality.validate(); fe != nil {
			return fe
		}
	}
	if fe := sc.Defaults.validate([]any{"defaults"}); fe != nil {
		return fe
	}
	// Sorted, so that a file with several mistakes always reports the same one.
	for _, name := range slices.Sorted(maps.Keys(sc.Models)) {
		if name == "" {
			return &fieldError{[]any{"models"}, "empty model name"}
		}
		ms := sc.Models[name]
		if fe := ms.validate([]any{"models", name}); fe != nil {
			return fe
		}
	}
	return nil
}

func (ms *ModelScript) validate(path []any) *fieldError {
	at := func(p ...any) []any { return append(append([]any{}, path...), p...) }
	if ms.TTFTMillis != nil && *ms.TTFTMillis < 0 {
		return &fieldError{at("ttft_ms"), "must not be negative"}
	}
	if ms.TokensPerSecond != nil && *ms.TokensPerSecond < 0 {
		return &fieldError{at("tokens_per_second"), "must not be negative"}
	}
	if ms.Always != nil {
		if fe := ms.Always.validate(at("always")); fe != nil {
			return fe
		}
	}
	for i := range ms.Steps {
		if fe := ms.Steps[i].validate(at("steps", i)); fe != nil {
			return fe
		}
	}
	return nil
}

func (st *Step) validate(path []any) *fieldError {
	at := func(p ...any) []any { return append(append([]any{}, path...), p...) }
	var actions []string
	if st.Answer != "" {
		actions = append(actions, "answer")
	}
	if st.Vote != "" {
		actions = append(actions, "vote")
	}
	if st.Submit {
		actions = append(actions, "submit")
	}
	if st.Restart != "" {
		actions = append(actions, "restart")
	}
	if len(st.Calls) > 0 {
		actions = append(actions, "calls")
	}
	if st.Fault != "" {
		actions = append(actions, "fault")
	}
	if len(actions) > 1 {
		return &fieldError{at(actions[1]), "a step takes one action, got " + strings.Join(actions, " and ")}
	}
	if st.Fault != "" {
		if _, _, ok := parseFault(st.Fault); !ok {
			return &fieldError{at("fault"), fmt.Sprintf("unknown fault %q (want an HTTP status 400-599, %s, %s, %s or %s)",
				st.Fault, faultCut, faultMalformedToolJSON, faultNoToolCall, faultHang)}
		}
	}
	if st.RetryAfter < 0 {
		return &fieldError{at("retry_after"), "must not be negative"}
	}
	if st.TTFTMillis != nil && *st.TTFTMillis < 0 {
		return &fieldError{at("ttft_ms"), "must not be negative"}
	}
	switch st.When {
	case "", WhenCoordination, WhenPresentation, WhenEvaluation:
	default:
		return &fieldError{at("when"), fmt.Sprintf("unknown value %q (want %s, %s or %s)",
			st.When, WhenCoordination, WhenPresentation, WhenEvaluation)}
	}
	for i, c := range st.Calls {
		if c.Name == "" {
			return &fieldError{at("calls", i, "name"), "tool name is required"}
		}
	}
	for i, e := range st.ExpectResults {
		if e.Name == "" && e.Contains == "" {
			return &fieldError{at("expect_results", i), "an expectation needs a name, contains or both"}
		}
	}
	return nil
}

// position finds the line and column of the value at path in the parsed
// document, walking the AST by hand: model names may contain characters
// ("/", ".", ":") that YAML path expressions would need to quote.
func position(f *ast.File, path []any) (line, col int) {
	if len(f.Docs) == 0 {
		return 0, 0
	}
	node := f.Docs[0].Body
	for _, p := range path {
		node = unwrap(node)
		var next ast.Node
		switch p := p.(type) {
		case string:
			for _, mv := range mappingValues(node) {
				if mv.Key != nil && mv.Key.GetToken() != nil && mv.Key.GetToken().Value == p {
					next = mv.Value
					if next == nil || next.GetToken() == nil {
						next = mv.Key
					}
					break
				}
			}
		case int:
			if seq, ok := node.(*ast.SequenceNode); ok && p < len(seq.Values) {
				next = seq.Values[p]
			}
		}
		if next == nil {
			break // report the deepest node we found
		}
		node = next
	}
	if node == nil || node.GetToken() == nil || node.GetToken().Position == nil {
		return 0, 0
	}
	pos := node.GetToken().Position
	return pos.Line, pos.Column
}

func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		default:
			return n
		}
	}
}

// mappingValues handles goccy's two shapes of a mapping: a one-entry mapping
// is a bare *MappingValueNode.
func mappingValues(n ast.Node) []*ast.MappingValueNode {
	switch v := n.(type) {
	case *ast.MappingNode:
		return v.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}
	}
	return nil
}

// script is the effective, merged script of one model name.
type script struct {
	ttftMillis  int
	tps         float64
	steps       []Step
	final       string
	answer      string
	voteReason  string
	always      *Step
	quality     *modelQuality // nil: the model has no quality rate
	ignoreTools bool
	window      int
}

// scriptFor merges the model's entry, the "*" entry and Defaults, field by
// field, most specific first. Steps are taken whole from the first entry in
// that chain that has any.
func (sc *Scenario) scriptFor(model string) script {
	var s script
	if sc == nil {
		return s
	}
	s.quality = sc.qualityFor(model)
	var chain []*ModelScript
	if ms, ok := sc.Models[model]; ok {
		chain = append(chain, &ms)
	}
	if ms, ok := sc.Models["*"]; ok && model != "*" {
		chain = append(chain, &ms)
	}
	chain = append(chain, &sc.Defaults)
	var ttftSet, tpsSet, ignoreSet, windowSet bool
	for _, ms := range chain {
		if !windowSet && ms.ContextWindow != nil {
			s.window, windowSet = *ms.ContextWindow, true
		}
		if !ignoreSet && ms.IgnoreTools != nil {
			s.ignoreTools, ignoreSet = *ms.IgnoreTools, true
		}
		if !ttftSet && ms.TTFTMillis != nil {
			s.ttftMillis, ttftSet = *ms.TTFTMillis, true
		}
		if !tpsSet && ms.TokensPerSecond != nil {
			s.tps, tpsSet = *ms.TokensPerSecond, true
		}
		if s.steps == nil && len(ms.Steps) > 0 {
			s.steps = ms.Steps
		}
		if s.final == "" {
			s.final = ms.Final
		}
		if s.answer == "" {
			s.answer = ms.Answer
		}
		if s.voteReason == "" {
			s.voteReason = ms.VoteReason
		}
		if s.always == nil {
			s.always = ms.Always
		}
	}
	return s
}
