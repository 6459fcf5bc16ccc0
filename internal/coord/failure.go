package coord

// Failure is why a turn or a call failed, as data: built once where the
// error happens (the agent, from a provider's typed error), then carried
// unchanged through the machine, the events, status.json, the server and
// the Python package, so that no reader has to parse a message to learn
// which provider answered which status. Message is already masked of
// secrets; it is what a person reads.
type Failure struct {
	Kind     FailureKind `json:"kind"`
	Agent    string      `json:"agent,omitempty"`
	Provider string      `json:"provider,omitempty"` // backend type, e.g. "openai", "claude", "sim"
	Model    string      `json:"model,omitempty"`
	Status   int         `json:"status,omitempty"` // HTTP status; 0 when no response came
	// Retryable says whether the same request may succeed later (a 429, a
	// 5xx, a cut stream): a client deciding whether to try again reads it.
	Retryable bool `json:"retryable,omitempty"`
	// RetryAfterSeconds is how long to wait before trying again, when the
	// provider said (retry-after) or a circuit breaker knows; 0 otherwise.
	RetryAfterSeconds float64 `json:"retry_after_s,omitempty"`
	Message           string  `json:"message"`
}

// FailureKind classifies a Failure. The values are part of the event
// schema and of every client surface; new kinds may be added.
type FailureKind string

const (
	FailAuth        FailureKind = "auth"         // 401/403: a missing, wrong or unauthorised key
	FailQuota       FailureKind = "quota"        // the account's quota or credit is spent (429 insufficient_quota, 402)
	FailRateLimit   FailureKind = "rate_limit"   // 429: too many requests for now
	FailStall       FailureKind = "stall"        // the response sent nothing for the idle timeout
	FailTimeout     FailureKind = "timeout"      // the turn's own timeout passed
	FailCircuitOpen FailureKind = "circuit_open" // the endpoint's breaker is open: no request was sent
	FailBadRequest  FailureKind = "bad_request"  // 400/404/413/422: the request itself is wrong (model name, parameters)
	FailProvider    FailureKind = "provider"     // the provider failed (5xx, a cut stream, a malformed response)
	FailTool        FailureKind = "tool"         // the agent's tools could not be started or used
	FailProtocol    FailureKind = "protocol"     // no valid workflow action (attempts or tool steps spent)
	FailCancelled   FailureKind = "cancelled"    // the turn or the run was cancelled
	FailOther       FailureKind = "other"        // anything else
)

// Error makes a Failure usable where an error is expected: its message.
func (f *Failure) Error() string { return f.Message }

// IsAuth reports whether the failure is a missing or refused credential.
func (f *Failure) IsAuth() bool { return f.Kind == FailAuth }

// IsRateLimit reports whether the provider asked to slow down or the
// account ran out of quota.
func (f *Failure) IsRateLimit() bool { return f.Kind == FailRateLimit || f.Kind == FailQuota }

// IsTimeout reports whether a timeout or an idle stream ended the turn.
func (f *Failure) IsTimeout() bool { return f.Kind == FailTimeout || f.Kind == FailStall }

// IsRetryable reports whether trying again later may succeed.
func (f *Failure) IsRetryable() bool { return f.Retryable }

// Permanent reports whether the failure is the provider refusing the
// request for a reason another turn cannot change: a key that is missing,
// wrong or not allowed (401/403), an account out of quota, a model the
// provider does not serve (404 model_not_found) or a request it rejects as
// invalid (400, 422). Its agent leaves the run at once instead of
// spending its failure budget on turns that fail the same way (see
// Machine.turnFailed). A status the provider marks as worth retrying
// (408, 409) is not permanent whatever its kind.
func (f *Failure) Permanent() bool {
	if f == nil || f.Retryable {
		return false
	}
	switch f.Kind {
	case FailAuth, FailQuota, FailBadRequest:
		return true
	}
	return false
}
