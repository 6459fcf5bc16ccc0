package tui

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/x/ansi"
)

// tallyLines draws the vote tally as bars: one per author of a current
// answer, in config order, scaled to the team (each agent has one vote).
func (m *model) tallyLines(w int) []string {
	s := &m.snap
	title := stAccent.Render("Votes")
	if s.Winner != "" {
		title += stDim.Render(" · winner ") + stWinner.Render(s.Winner)
	} else {
		// Votes count only since the last accepted answer (the machine's
		// epoch), which a bare "epoch 2" did not explain.
		title += stDim.Render(fmt.Sprintf(" · %d of %d voted since the last answer", len(s.Votes), len(s.Agents)))
	}
	var ids []string
	name := 0
	for _, ag := range s.Agents {
		if _, ok := s.Tally[ag.ID]; ok {
			ids = append(ids, ag.ID)
			name = max(name, len(ag.ID))
		}
	}
	if len(ids) == 0 {
		return []string{title, stDim.Render("  no answers yet")}
	}
	total := max(1, len(s.Agents))
	barW := max(4, min(30, w-name-10))
	lines := []string{title}
	for _, id := range ids {
		n := s.Tally[id]
		full := n * barW / total
		bar := stBar.Render(strings.Repeat("█", full)) + stDim.Render(strings.Repeat("░", barW-full))
		label := fmt.Sprintf("  %-*s ", name, id)
		if id == s.Winner {
			label = stWinner.Render(label)
		}
		lines = append(lines, label+bar+fmt.Sprintf(" %d", n))
	}
	return lines
}

// voteLines is the votes page: the tally, then every counted vote with
// its reason, then how the winner was chosen.
func (m *model) voteLines(w int) []string {
	s := &m.snap
	lines := append(m.tallyLines(w), "")
	if len(s.Votes) == 0 {
		lines = append(lines, stDim.Render("No vote counted in this epoch yet."))
	}
	for _, v := range s.Votes {
		head := stBold.Render(v.Voter) + " → " + stBold.Render(v.Target)
		if v.TargetAnswer != "" {
			head += stDim.Render(" (" + v.TargetAnswer + ")")
		}
		lines = append(lines, head)
		if v.Reason != "" {
			for _, l := range wrapLines(oneLine(v.Reason), w-4) {
				lines = append(lines, "    "+l)
			}
		}
	}
	if s.How != "" {
		lines = append(lines, "", "Winner "+s.Winner+" ("+s.How+")")
	}
	return lines
}

// tableLines is the coordination table: one row per agent with what it
// did in this attempt, then every accepted answer of the run.
func (m *model) tableLines() []string {
	s := &m.snap
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tSTATUS\tANSWERS\tVOTE\tTURNS\tRESTARTS\tFAILED\tTOOLS\tTOKENS\tCOST")
	for _, ag := range s.Agents {
		vote := "-"
		if ag.Vote != nil {
			vote = "→ " + ag.Vote.Target
		}
		answers := fmt.Sprint(ag.Answers)
		if ag.LatestAnswer != "" {
			answers += " (" + ag.LatestAnswer + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t$%.4f\n", ag.ID, ag.Status, answers, vote, ag.Turns,
			ag.Restarts, ag.Failures, ag.ToolCalls, thousands(ag.Usage.InputTokens+ag.Usage.OutputTokens), ag.Usage.CostUSD)
	}
	tw.Flush()
	lines := []string{stAccent.Render(fmt.Sprintf("Coordination · attempt %d · %s accepted", s.Attempt, plural(s.Epoch, "answer"))), ""}
	lines = append(lines, strings.Split(strings.TrimRight(b.String(), "\n"), "\n")...)
	lines = append(lines, "", stAccent.Render("Answers"))
	if len(s.Answers) == 0 {
		lines = append(lines, stDim.Render("none yet"))
	}
	for _, a := range s.Answers {
		lines = append(lines, fmt.Sprintf("%-10s %-12s %s", a.Label, a.Agent, oneLine(a.Content)))
	}
	if s.Winner != "" {
		lines = append(lines, "", fmt.Sprintf("Winner: %s (%s, %s)", s.Winner, s.WinnerLabel, s.How))
	}
	return lines
}

// mdCache keeps the final answer's markdown rendering (markdown.go): the
// text changes once, the frames many times.
type mdCache struct {
	text  string
	width int
	out   string
}

func (c *mdCache) render(text string, width int) string {
	if c.text == text && c.width == width && c.out != "" {
		return c.out
	}
	c.text, c.width = text, width
	out := renderMarkdown(text, width)
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
		if ansi.Strip(lines[i]) == "" || strings.TrimSpace(ansi.Strip(lines[i])) == "" {
			lines[i] = ""
		}
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	c.out = strings.Join(slices.Clip(lines), "\n")
	return c.out
}
