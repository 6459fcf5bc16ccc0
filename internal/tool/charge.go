package tool

import (
	"context"

	"github.com/massgen/massgen/internal/llm"
)

// A tool that spends money of its own — a subagent is a whole run of
// other models — charges it to the agent that called it: the orchestrator
// puts a charge function into each turn's context (WithCharge), and the
// tool calls Charge with what it spent. The spend then counts in the
// run's budget (max_cost_usd, max_total_tokens) and its totals, priced by
// the tool (its models' prices), not by the calling agent's model.

type chargeKey struct{}

// ChargeFunc records a spend; it reports false once the run it charges
// has ended, when the spend can no longer be counted there.
type ChargeFunc func(u llm.Usage, costUSD float64) bool

// WithCharge returns ctx carrying charge.
func WithCharge(ctx context.Context, charge ChargeFunc) context.Context {
	return context.WithValue(ctx, chargeKey{}, charge)
}

// ChargeOf is the charge function of ctx, or nil.
func ChargeOf(ctx context.Context) ChargeFunc {
	f, _ := ctx.Value(chargeKey{}).(ChargeFunc)
	return f
}
