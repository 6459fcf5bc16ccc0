package runlog

import (
	"github.com/massgen/massgen/internal/event"
)

// stepVote is agent_<id>/<step-ts>/vote.json.
type stepVote struct {
	VoterID         string   `json:"voter_id"`
	VotedFor        string   `json:"voted_for"`
	VotedForLabel   string   `json:"voted_for_label"`
	VotedForAnswer  string   `json:"voted_for_answer"`
	Reason          string   `json:"reason"`
	Timestamp       string   `json:"timestamp"`
	Epoch           int      `json:"epoch"`
	AvailableLabels []string `json:"available_labels"`
}

// voteSummary is the top-level (and per-attempt) vote.json.
type voteSummary struct {
	Winner string         `json:"winner"`
	Reason string         `json:"reason"`
	Tally  map[string]int `json:"tally"`
	Votes  []voteEntry    `json:"votes"`
	// Labels maps the anonymous labels the final epoch's voters saw to
	// real ids; AnswerLabels maps them to the answers' stable labels.
	Labels       map[string]string `json:"labels"`
	AnswerLabels map[string]string `json:"answer_labels"`
	// Usage of the whole run so far (every agent, every request).
	Usage usageSummary `json:"usage"`
}

type usageSummary struct {
	InputTokens  int64              `json:"input_tokens"`
	OutputTokens int64              `json:"output_tokens"`
	CostUSD      float64            `json:"cost_usd"`
	PerAgent     map[string]float64 `json:"cost_usd_per_agent"`
	// Tool use per agent, every agent listed (zeros included).
	ToolsPerAgent map[string]toolUse `json:"tools_per_agent"`
}

// toolUse is one agent's tool use: rounds are its responses that ran
// tools, each a model request beyond the ones that answered or voted.
type toolUse struct {
	Calls  int `json:"tool_calls"`
	Errors int `json:"tool_errors"`
	Rounds int `json:"tool_rounds"`
}

type voteEntry struct {
	Voter          string `json:"voter"`
	VotedFor       string `json:"voted_for"`
	VotedForLabel  string `json:"voted_for_label"`
	VotedForAnswer string `json:"voted_for_answer"`
	Reason         string `json:"reason"`
	Epoch          int    `json:"epoch"`
}

// voteSummaryOf builds vote.json from the run as an attempt ended. Only the
// final epoch's votes count: any vote cast before the last accepted answer
// was invalidated by it (DESIGN.md §2), and MassGen's stale-vote bug
// (reference §12.5) is exactly counting those.
func voteSummaryOf(s event.Snapshot) voteSummary {
	vs := voteSummary{
		Winner:       s.Winner,
		Reason:       s.How,
		Tally:        s.EpochTally(),
		Votes:        make([]voteEntry, 0, len(s.Votes)),
		Labels:       s.Labels(),
		AnswerLabels: make(map[string]string, len(s.Current)),
		Usage: usageSummary{InputTokens: s.Usage.InputTokens, OutputTokens: s.Usage.OutputTokens, CostUSD: s.Usage.CostUSD,
			PerAgent: make(map[string]float64, len(s.Agents)), ToolsPerAgent: make(map[string]toolUse, len(s.Agents))},
	}
	for _, a := range s.Current {
		vs.AnswerLabels[a.Label] = a.Answer
	}
	for _, ag := range s.Agents {
		vs.Usage.PerAgent[ag.ID] = ag.Usage.CostUSD
		vs.Usage.ToolsPerAgent[ag.ID] = toolUse{Calls: ag.ToolCalls, Errors: ag.ToolErrors, Rounds: ag.ToolRounds}
	}
	if vs.Winner == "" {
		vs.Winner = s.FinalAgent
	}
	for _, v := range s.Votes {
		vs.Votes = append(vs.Votes, voteEntry{Voter: v.Voter, VotedFor: v.Target, VotedForLabel: v.TargetLabel,
			VotedForAnswer: v.TargetAnswer, Reason: v.Reason, Epoch: v.Epoch})
	}
	return vs
}

// voteCell is the table text for a vote: the answer's stable label with its
// author, the label the voter used, then the reason cut to fit.
func voteCell(v event.VoteAccepted) string {
	s := "voted "
	switch {
	case v.TargetAnswer != "":
		s += v.TargetAnswer + " (" + v.Target + ")"
	case v.Target != "":
		s += v.Target
	default:
		s += orDash(v.TargetLabel)
	}
	if v.TargetLabel != "" {
		s += " as " + v.TargetLabel
	}
	if r := oneLine(v.Reason); r != "" {
		s += " — " + truncate(r, 40)
	}
	return s
}
