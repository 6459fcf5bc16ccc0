package coord

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// Inputs and commands encode as flat JSON objects with a "kind" member,
// the type's name in snake case: {"kind":"turn_failed","Agent":"b",...}.
// A run's inputs written this way are its replay log: decoding them and
// stepping a fresh Machine through them gives the run's commands again.

var (
	inputTypes   = kinds(Start{}, Proposed{}, TurnFailed{}, DeadlinePassed{}, BudgetSpent{}, Presented{}, Evaluated{}, GraceExpired{}, Interrupted{}, RoundTimeUp{}, CriteriaSet{})
	commandTypes = kinds(Reply{}, StartTurn{}, CancelTurn{}, Inject{}, AgentFailed{}, Present{}, AnswerDirect{}, Final{}, Evaluate{}, Restart{}, CancelCall{}, SetTimer{}, Finish{}, WrapUp{})
)

func kinds(vs ...any) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, v := range vs {
		t := reflect.TypeOf(v)
		m[kindOf(t)] = t
	}
	return m
}

// kindOf is a type's name in snake case: TurnFailed → turn_failed.
func kindOf(t reflect.Type) string {
	var b strings.Builder
	for i, r := range t.Name() {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// InputKind is the kind an input is logged under: TurnFailed → "turn_failed".
func InputKind(in Input) string { return kindOf(reflect.TypeOf(in)) }

// MarshalInput encodes an input with its kind.
func MarshalInput(in Input) ([]byte, error) { return marshalKind(in) }

// MarshalCommand encodes a command with its kind.
func MarshalCommand(c Command) ([]byte, error) { return marshalKind(c) }

// UnmarshalInput decodes what MarshalInput wrote.
func UnmarshalInput(b []byte) (Input, error) {
	v, err := unmarshalKind(b, inputTypes)
	if err != nil {
		return nil, err
	}
	return v.(Input), nil
}

// UnmarshalCommand decodes what MarshalCommand wrote.
func UnmarshalCommand(b []byte) (Command, error) {
	v, err := unmarshalKind(b, commandTypes)
	if err != nil {
		return nil, err
	}
	return v.(Command), nil
}

func marshalKind(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	fields["kind"], _ = json.Marshal(kindOf(reflect.TypeOf(v)))
	return json.Marshal(fields)
}

func unmarshalKind(b []byte, types map[string]reflect.Type) (any, error) {
	var head struct{ Kind string }
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, err
	}
	t, ok := types[head.Kind]
	if !ok {
		return nil, fmt.Errorf("coord: unknown kind %q", head.Kind)
	}
	p := reflect.New(t)
	if err := json.Unmarshal(b, p.Interface()); err != nil {
		return nil, fmt.Errorf("coord: decoding %s: %w", head.Kind, err)
	}
	return p.Elem().Interface(), nil
}

// Record is one step of a run as a replay log keeps it: the input fed to
// the machine and the commands it returned.
type Record struct {
	In  Input
	Out []Command
}

type recordJSON struct {
	In  json.RawMessage   `json:"in"`
	Out []json.RawMessage `json:"out"`
}

// MarshalJSON encodes the record with its input's and commands' kinds.
func (r Record) MarshalJSON() ([]byte, error) {
	var rj recordJSON
	var err error
	if rj.In, err = MarshalInput(r.In); err != nil {
		return nil, err
	}
	rj.Out = []json.RawMessage{}
	for _, c := range r.Out {
		b, err := MarshalCommand(c)
		if err != nil {
			return nil, err
		}
		rj.Out = append(rj.Out, b)
	}
	return json.Marshal(rj)
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (r *Record) UnmarshalJSON(b []byte) error {
	var rj recordJSON
	if err := json.Unmarshal(b, &rj); err != nil {
		return err
	}
	in, err := UnmarshalInput(rj.In)
	if err != nil {
		return err
	}
	r.In, r.Out = in, nil
	for _, cb := range rj.Out {
		c, err := UnmarshalCommand(cb)
		if err != nil {
			return err
		}
		r.Out = append(r.Out, c)
	}
	return nil
}
