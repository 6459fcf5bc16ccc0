package runlog

import (
	"slices"
	"time"

	"github.com/massgen/massgen/internal/event"
)

// voteRecord is one accepted vote as the log keeps it.
type voteRecord struct {
	Voter         string
	VotedFor      string // real id
	VotedForLabel string // anonymous label as the voter saw it
	Reason        string
	Epoch         int
	Time          time.Time
	Labels        []string // labels the voter was shown (its last TurnStarted)
}

// stepVote is agent_<id>/<step-ts>/vote.json.
type stepVote struct {
	VoterID         string   `json:"voter_id"`
	VotedFor        string   `json:"voted_for"`
	VotedForLabel   string   `json:"voted_for_label"`
	Reason          string   `json:"reason"`
	Timestamp       string   `json:"timestamp"`
	Epoch           int      `json:"epoch"`
	AvailableLabels []string `json:"available_labels"`
}

// voteSummary is the top-level (and per-attempt) vote.json.
type voteSummary struct {
	Winner string            `json:"winner"`
	Reason string            `json:"reason"`
	Tally  map[string]int    `json:"tally"`
	Votes  []voteEntry       `json:"votes"`
	Labels map[string]string `json:"labels"`
	// Usage of the whole run so far (every agent, every request).
	Usage usageSummary `json:"usage"`
}

type usageSummary struct {
	InputTokens  int64              `json:"input_tokens"`
	OutputTokens int64              `json:"output_tokens"`
	CostUSD      float64            `json:"cost_usd"`
	PerAgent     map[string]float64 `json:"cost_usd_per_agent"`
}

type voteEntry struct {
	Voter         string `json:"voter"`
	VotedFor      string `json:"voted_for"`
	VotedForLabel string `json:"voted_for_label"`
	Reason        string `json:"reason"`
	Epoch         int    `json:"epoch"`
}

// recordVote adds a VoteAccepted to the current epoch. Its epoch is the
// count of answers accepted before it, which is exactly the answer set the
// orchestrator accepted the vote against.
func (w *Writer) recordVote(e event.Event) voteRecord {
	v := voteRecord{
		Voter:         e.Agent,
		VotedFor:      e.Target,
		VotedForLabel: e.TargetLabel,
		Reason:        e.Reason,
		Epoch:         w.cur.epoch,
		Time:          e.Time,
	}
	if ag := w.agents[e.Agent]; ag != nil {
		v.Labels = slices.Clone(ag.labels)
	}
	w.cur.epochVotes = append(w.cur.epochVotes, v)
	return v
}

// tally counts votes per real id. Agents in withAnswers start at 0 so the
// summary shows the answers that got no vote, too.
func tally(votes []voteRecord, withAnswers map[string]bool) map[string]int {
	m := make(map[string]int, len(withAnswers))
	for id := range withAnswers {
		m[id] = 0
	}
	for _, v := range votes {
		m[v.VotedFor]++
	}
	return m
}

// voteSummary builds vote.json for attempt a. Only the final epoch's votes
// count: any vote cast before the last accepted answer was invalidated by it
// (DESIGN.md §2), and MassGen's stale-vote bug (reference §12.5) is exactly
// counting those.
func (w *Writer) voteSummary(a *attempt) voteSummary {
	s := voteSummary{
		Winner: a.winner,
		Reason: a.winReason,
		Tally:  tally(a.epochVotes, a.hasAnswer),
		Votes:  make([]voteEntry, 0, len(a.epochVotes)),
		Labels: w.labels(a),
		Usage:  usageSummary{PerAgent: map[string]float64{}},
	}
	for id, ag := range w.agents {
		s.Usage.InputTokens += ag.inputTokens
		s.Usage.OutputTokens += ag.outputTokens
		s.Usage.CostUSD += ag.costUSD
		s.Usage.PerAgent[id] = ag.costUSD
	}
	if s.Winner == "" {
		s.Winner = a.finalAgent
	}
	for _, v := range a.epochVotes {
		s.Votes = append(s.Votes, voteEntry{
			Voter:         v.Voter,
			VotedFor:      v.VotedFor,
			VotedForLabel: v.VotedForLabel,
			Reason:        v.Reason,
			Epoch:         v.Epoch,
		})
	}
	return s
}

// labels maps anonymous labels to real ids as the final epoch's voters saw
// them. Events carry the pair only on votes, so the rest is derived from
// DESIGN.md §2's numbering (agent1..agentK over agents with answers, in
// config order). If an observed pair contradicts that derivation, the
// emitter numbers differently and only observed pairs are trusted.
func (w *Writer) labels(a *attempt) map[string]string {
	observed := map[string]string{}
	for _, v := range a.epochVotes {
		if v.VotedForLabel != "" && v.VotedFor != "" {
			observed[v.VotedForLabel] = v.VotedFor
		}
	}
	derived := map[string]string{}
	k := 0
	for _, id := range w.order {
		if a.hasAnswer[id] {
			k++
			derived["agent"+itoa(k)] = id
		}
	}
	for l, id := range observed {
		if derived[l] != id {
			return observed
		}
	}
	return derived
}

// voteCell is the table text for a vote: label and real id, then the
// reason cut to fit.
func voteCell(v voteRecord) string {
	s := "voted "
	switch {
	case v.VotedForLabel != "" && v.VotedFor != "":
		s += v.VotedForLabel + " (" + v.VotedFor + ")"
	case v.VotedForLabel != "":
		s += v.VotedForLabel
	default:
		s += orDash(v.VotedFor)
	}
	if r := oneLine(v.Reason); r != "" {
		s += " — " + truncate(r, 40)
	}
	return s
}
