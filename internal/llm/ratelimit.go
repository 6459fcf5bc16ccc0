package llm

import (
	"context"
	"iter"
	"math"

	"golang.org/x/time/rate"
)

// Limiter paces requests to one provider model so that a team stays under
// its requests-per-minute and tokens-per-minute quotas instead of running
// into 429s. It is shared by every agent on the same endpoint and model.
type Limiter struct {
	requests *rate.Limiter // nil: no request limit
	tokens   *rate.Limiter // nil: no token limit
}

// NewLimiter returns a limiter for rpm requests and tpm tokens per minute
// (0 means no limit on that count), or nil when both are 0.
func NewLimiter(rpm, tpm int) *Limiter {
	if rpm <= 0 && tpm <= 0 {
		return nil
	}
	l := &Limiter{}
	if rpm > 0 {
		l.requests = rate.NewLimiter(rate.Limit(float64(rpm)/60), max(1, rpm/60))
	}
	if tpm > 0 {
		// The burst must hold one large prompt, or WaitN could never succeed.
		l.tokens = rate.NewLimiter(rate.Limit(float64(tpm)/60), tpm)
	}
	return l
}

// wait blocks until a request with the given estimated prompt size may go.
func (l *Limiter) wait(ctx context.Context, tokens int) error {
	if l.requests != nil {
		if err := l.requests.Wait(ctx); err != nil {
			return err
		}
	}
	if l.tokens != nil {
		return l.tokens.WaitN(ctx, min(tokens, l.tokens.Burst()))
	}
	return nil
}

// EstimateTokens guesses a request's prompt size (about four characters a
// token), for pacing before the provider has counted it.
func EstimateTokens(req *Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Arguments)
		}
	}
	return int(math.Ceil(float64(n) / 4))
}

// WithRateLimit paces m with l (nil l returns m unchanged). Waiting honours
// ctx, so a cancelled turn leaves the queue at once.
func WithRateLimit(m Model, l *Limiter) Model {
	if l == nil {
		return m
	}
	return &limitedModel{m: m, l: l}
}

type limitedModel struct {
	m Model
	l *Limiter
}

func (lm *limitedModel) Stream(ctx context.Context, req *Request) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		if err := lm.l.wait(ctx, EstimateTokens(req)); err != nil {
			yield(Chunk{}, err)
			return
		}
		for c, err := range lm.m.Stream(ctx, req) {
			if !yield(c, err) {
				return
			}
		}
	}
}
