package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/massgen/massgen/internal/store"
)

// ExportMarkdown renders a session as a readable conversation: each turn's
// question and final answer, then who answered and who voted for what.
func ExportMarkdown(s store.Session, turns []store.Turn) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# massgen session %s\n\n", s.ID)
	fmt.Fprintf(&b, "- created: %s\n- status: %s\n- turns: %d\n", s.Created.Format(time.RFC3339), s.Status, len(turns))
	if s.ConfigPath != "" {
		fmt.Fprintf(&b, "- config: %s\n", s.ConfigPath)
	}
	if s.LogDir != "" {
		fmt.Fprintf(&b, "- logs: %s\n", s.LogDir)
	}
	for _, t := range turns {
		fmt.Fprintf(&b, "\n## Turn %d (%s)\n\n**User:** %s\n\n", t.N, t.Status, t.Question)
		if t.Final != "" {
			fmt.Fprintf(&b, "**massgen** (winner %s, %s):\n\n%s\n", t.Winner, t.WinnerLabel, t.Final)
		} else if t.Err != "" {
			fmt.Fprintf(&b, "_No answer: %s_\n", t.Err)
		}
		if len(t.Answers) > 0 {
			b.WriteString("\n### Answers\n\n")
			for _, a := range t.Answers {
				fmt.Fprintf(&b, "- **%s** (%s): %s\n", a.Label, a.Agent, preview(a.Content, 300))
			}
		}
		if len(t.Votes) > 0 {
			b.WriteString("\n### Votes\n\n")
			for _, v := range t.Votes {
				fmt.Fprintf(&b, "- %s → %s (%s): %s\n", v.Agent, v.Target, v.TargetLabel, preview(v.Reason, 200))
			}
		}
		if tot := t.Totals(); tot.InputTokens+tot.OutputTokens > 0 {
			fmt.Fprintf(&b, "\n_Usage: %d input + %d output tokens, $%.4f._\n", tot.InputTokens, tot.OutputTokens, tot.CostUSD)
		}
	}
	return b.String()
}

// ExportJSON renders a session and every turn with all its answers, votes
// and usage.
func ExportJSON(s store.Session, turns []store.Turn) ([]byte, error) {
	type answer struct {
		Agent   string    `json:"agent"`
		Label   string    `json:"label"`
		Content string    `json:"content"`
		At      time.Time `json:"at"`
	}
	type vote struct {
		Agent       string    `json:"agent"`
		Target      string    `json:"voted_for"`
		TargetLabel string    `json:"voted_for_label"`
		Reason      string    `json:"reason"`
		At          time.Time `json:"at"`
	}
	type usage struct {
		Agent        string  `json:"agent"`
		InputTokens  int64   `json:"input_tokens"`
		OutputTokens int64   `json:"output_tokens"`
		CostUSD      float64 `json:"cost_usd"`
	}
	type turn struct {
		N           int        `json:"turn"`
		Question    string     `json:"question"`
		Status      string     `json:"status"`
		Started     time.Time  `json:"started_at"`
		Ended       *time.Time `json:"ended_at"`
		Winner      string     `json:"winner"`
		WinnerLabel string     `json:"winner_label"`
		Final       string     `json:"final_answer"`
		Err         string     `json:"error,omitempty"`
		LogDir      string     `json:"log_dir"`
		Answers     []answer   `json:"answers"`
		Votes       []vote     `json:"votes"`
		Usage       []usage    `json:"usage"`
	}
	out := struct {
		ID         string    `json:"session_id"`
		Created    time.Time `json:"created_at"`
		Updated    time.Time `json:"updated_at"`
		Status     string    `json:"status"`
		ConfigPath string    `json:"config_path"`
		LogDir     string    `json:"log_dir"`
		Turns      []turn    `json:"turns"`
	}{ID: s.ID, Created: s.Created, Updated: s.Updated, Status: s.Status, ConfigPath: s.ConfigPath, LogDir: s.LogDir, Turns: []turn{}}
	for _, t := range turns {
		x := turn{N: t.N, Question: t.Question, Status: t.Status, Started: t.Started, Winner: t.Winner, WinnerLabel: t.WinnerLabel,
			Final: t.Final, Err: t.Err, LogDir: t.LogDir, Answers: []answer{}, Votes: []vote{}, Usage: []usage{}}
		if !t.Ended.IsZero() {
			e := t.Ended
			x.Ended = &e
		}
		for _, a := range t.Answers {
			x.Answers = append(x.Answers, answer(a))
		}
		for _, v := range t.Votes {
			x.Votes = append(x.Votes, vote(v))
		}
		for _, u := range t.Usage {
			x.Usage = append(x.Usage, usage(u))
		}
		out.Turns = append(out.Turns, x)
	}
	return json.MarshalIndent(out, "", "  ")
}

// preview is s on one line, cut to n runes.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
