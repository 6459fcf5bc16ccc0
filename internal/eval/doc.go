// Package eval measures teams on a dataset: does the team beat its best
// member, and at what cost? It is what `massgen eval` runs (docs/eval.md).
//
// An evaluation runs every item of a dataset (package dataset: JSONL or
// CSV, a question and its target) through every system — each team config
// given, and with baselines each member of each team alone, on the same
// backend block — in-process through internal/app exactly as `massgen`
// runs one question, a bounded number at a time, each run under the
// evaluation's deadline and budget. Each run's answer is scored (scorer.go:
// exact, normalised match, numeric with a tolerance, multiple choice, a
// regular expression, a model-graded judge, or a Python function run the
// way custom tools are), epochs are reduced per item (reduce.go), and the
// outcome of each run — score, tokens, cost, latency, winner, votes,
// restarts — is appended to a journal as soon as it is known, durably, so
// that an interrupted evaluation resumes where it stopped (journal.go).
//
// The results (results.go) are a versioned JSON file for other tools: per
// item and system, and per system the accuracy with a seeded bootstrap
// confidence interval, cost per correct answer and latency percentiles;
// each team is compared with its best member by a paired bootstrap
// (stats.go). report.go writes them as markdown with two SVG plots drawn
// by svg.go (accuracy against cost with interval bars; a per-item heat map
// of who got what right); compare.go puts two result files side by side.
//
// It sits beside the command line, above app: it must not import
// internal/cli, internal/server or the TUI.
package eval
