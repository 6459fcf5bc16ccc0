package gemini

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Thought signatures.
//
// Gemini attaches an opaque thoughtSignature to the first function call of
// each step. Gemini 3 models refuse a conversation (400 "Function call is
// missing a thought_signature") when a function call of the current turn is
// sent back without its signature, and every thinking model reasons better
// with them. llm.ToolCall has no room for provider data, so the adapter
// remembers each signature by call id, process-wide, and puts it back when
// the call reappears in a later request. A call this process never saw (a
// restarted run, a trimmed history) gets the validator-skipping placeholder
// that Google documents for histories without signatures, on models that
// enforce them.

// skipSignature is Google's documented placeholder signature: "If you are
// transferring a trace from a different model … set thoughtSignature to
// skip_thought_signature_validator".
const skipSignature = "skip_thought_signature_validator"

// maxSignatures bounds the store; the oldest signatures go first. A turn
// rarely holds more than a few dozen calls, so this covers every live
// conversation of a large team.
const maxSignatures = 8192

var signatures = newSignatureStore(maxSignatures)

type signature struct {
	name string // the call's function name, checked on the way back
	sig  []byte
}

type signatureStore struct {
	mu    sync.Mutex
	max   int
	byID  map[string]signature
	order []string // insertion order, for eviction
}

func newSignatureStore(max int) *signatureStore {
	return &signatureStore{max: max, byID: map[string]signature{}}
}

func (s *signatureStore) put(id, name string, sig []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; !ok {
		s.order = append(s.order, id)
	}
	s.byID[id] = signature{name: name, sig: append([]byte(nil), sig...)}
	for len(s.order) > s.max {
		delete(s.byID, s.order[0])
		s.order = s.order[1:]
	}
}

// get returns the signature stored for the call, or nil. A call id reused
// with another function name is not the same call.
func (s *signatureStore) get(id, name string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[id]; ok && e.name == name {
		return e.sig
	}
	return nil
}

// enforcesSignatures reports whether a model rejects function calls without
// their signature. Gemini 1.x and 2.x do not; Gemini 3 and anything newer or
// unknown (aliases such as gemini-flash-latest) are assumed to.
func enforcesSignatures(model string) bool {
	name := strings.TrimPrefix(model, "models/")
	return !strings.HasPrefix(name, "gemini-1") && !strings.HasPrefix(name, "gemini-2")
}

// callSeq numbers the ids made up for function calls the API sent without
// one (Gemini 2.x). They are unique in the process, so a remembered
// signature can never attach to another turn's call.
var callSeq atomic.Uint64

func newCallID() string { return "call_" + strconv.FormatUint(callSeq.Add(1), 10) }
