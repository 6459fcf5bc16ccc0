package runlog

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/massgen/massgen/internal/event"
)

// Column sizing. The table must read in an 80-column terminal, so up to
// four agents share 80 columns and cells wrap; more agents widen the table
// (up to 160) rather than squeezing columns below minCol.
const (
	tableBudget    = 80
	tableMaxBudget = 160
	minCol         = 16
	maxCol         = 40
	tinyCol        = 8
)

// group is one row block of the table: an epoch, or a section such as the
// final presentation. cells holds, per agent, what it did, in order.
type group struct {
	title string
	cells map[string][]string
}

// note records what agent did in the current row block. Run-wide notes
// (agent "") go to the footer: they belong to no column.
func (a *attempt) note(agent, text string, epoch int) {
	if agent == "" {
		a.notes = append(a.notes, text)
		return
	}
	title := a.section
	if title == "" {
		title = "Epoch " + itoa(epoch)
		if epoch == 0 {
			title += " (before any answer)"
		}
	}
	var g *group
	if n := len(a.groups); n > 0 && a.groups[n-1].title == title {
		g = a.groups[n-1]
	} else {
		g = &group{title: title, cells: map[string][]string{}}
		a.groups = append(a.groups, g)
	}
	g.cells[agent] = append(g.cells[agent], text)
}

// toolCell is the table text for a tool call: "tool add ok 12ms", or
// "tool lookup error 3ms" (the result is in agent_outputs and the events).
func toolCell(e event.ToolCalled) string {
	outcome := "ok"
	if e.IsError {
		outcome = "error"
	}
	return "tool " + e.Tool + " " + outcome + " " + event.Took(e.Duration)
}

func (w *Writer) writeTable() error {
	return w.put(filepath.Join(w.dir, "coordination_table.txt"), []byte(w.renderTable()))
}

// renderTable draws every attempt as a box table, one column per agent in
// config order, then a footer with votes, winner and the run's outcome.
func (w *Writer) renderTable() string {
	var b strings.Builder
	s := w.snapshot()
	order := make([]string, len(s.Agents))
	headers := make([]string, len(s.Agents))
	for i, ag := range s.Agents {
		order[i], headers[i] = ag.ID, header(ag.AgentInfo)
	}
	widths := w.columnWidths(order, headers)
	total := 1
	for _, cw := range widths {
		total += cw + 3
	}
	textWidth := max(total, 72)

	b.WriteString("MassGen coordination table\n")
	writeWrapped(&b, "Question: "+truncate(oneLine(s.Question), 400), textWidth)
	writeWrapped(&b, "Log: "+w.dir, textWidth)

	multi := w.meta.Attempts || len(w.attempts) > 1
	for _, a := range w.attempts {
		b.WriteByte('\n')
		if multi {
			fmt.Fprintf(&b, "=== Attempt %d ===\n", a.n)
		}
		if len(widths) > 0 {
			renderGroups(&b, a, order, headers, widths, total)
		}
		for _, line := range attemptFooter(a, w.attemptSnapshot(a), order) {
			writeWrapped(&b, line, textWidth)
		}
	}

	b.WriteByte('\n')
	status := "Status: " + s.Status
	if s.Err != "" {
		status += " — " + truncate(oneLine(s.Err), 200)
	}
	end := s.FinishedAt
	if end.IsZero() {
		end = w.now()
	}
	status += fmt.Sprintf(" (duration %s)", end.Sub(w.started).Round(100*time.Millisecond))
	writeWrapped(&b, status, textWidth)
	writeWrapped(&b, fmt.Sprintf("Events: %d recorded, %d streaming deltas (%d dropped)", len(w.events), s.Deltas, w.dropped), textWidth)
	return b.String()
}

// header is a column title: "id (backend/model) [sim]".
func header(ag event.AgentInfo) string {
	h := ag.ID
	switch {
	case ag.Backend != "" && ag.Model != "":
		h += " (" + ag.Backend + "/" + ag.Model + ")"
	case ag.Backend != "" || ag.Model != "":
		h += " (" + ag.Backend + ag.Model + ")"
	}
	if ag.Simulated {
		h += " [sim]"
	}
	return h
}

// columnWidths fits each column to its longest header or cell, capped so
// the whole table stays within the budget; longer cells wrap.
func (w *Writer) columnWidths(order, headers []string) []int {
	n := len(headers)
	if n == 0 {
		return nil
	}
	budget := tableBudget
	if need := n*(minCol+3) + 1; need > budget {
		budget = min(tableMaxBudget, need)
	}
	capW := min(maxCol, max(tinyCol, (budget-1)/n-3))
	widths := make([]int, n)
	for i, id := range order {
		natural := utf8.RuneCountInString(headers[i])
		for _, a := range w.attempts {
			for _, g := range a.groups {
				for _, c := range g.cells[id] {
					natural = max(natural, utf8.RuneCountInString(c))
				}
			}
		}
		widths[i] = min(capW, max(tinyCol, natural))
	}
	return widths
}

func renderGroups(b *strings.Builder, a *attempt, order, headers []string, widths []int, total int) {
	rule := func(ch string) {
		b.WriteByte('+')
		for _, cw := range widths {
			b.WriteString(strings.Repeat(ch, cw+2))
			b.WriteByte('+')
		}
		b.WriteByte('\n')
	}
	row := func(cols [][]string) {
		lines := 0
		for _, c := range cols {
			lines = max(lines, len(c))
		}
		for l := range lines {
			b.WriteByte('|')
			for i, c := range cols {
				s := ""
				if l < len(c) {
					s = c[l]
				}
				b.WriteString(" " + pad(s, widths[i]) + " |")
			}
			b.WriteByte('\n')
		}
	}

	rule("-")
	hcols := make([][]string, len(headers))
	for i, h := range headers {
		hcols[i] = wrap(h, widths[i])
	}
	row(hcols)
	rule("=")
	if len(a.groups) == 0 {
		inner := total - 4
		b.WriteString("| " + pad(truncate("(no activity)", inner), inner) + " |\n")
		rule("-")
	}
	for _, g := range a.groups {
		inner := total - 4
		b.WriteString("| " + pad(truncate(g.title, inner), inner) + " |\n")
		rule("-")
		cols := make([][]string, len(order))
		for i, id := range order {
			for _, c := range g.cells[id] {
				cols[i] = append(cols[i], wrap(c, widths[i])...)
			}
		}
		row(cols)
		rule("-")
	}
}

// attemptFooter summarises one attempt from the run as it ended: the final
// epoch's tally (the only votes that count), the winner and how it was
// chosen, the final answer.
func attemptFooter(a *attempt, s event.Snapshot, order []string) []string {
	var lines []string
	t := s.EpochTally()
	if len(t) == 0 {
		lines = append(lines, "Votes: none")
	} else {
		var parts []string
		for _, id := range order {
			if n, ok := t[id]; ok {
				parts = append(parts, fmt.Sprintf("%s %d", id, n))
				delete(t, id)
			}
		}
		for _, id := range slices.Sorted(maps.Keys(t)) { // votes for ids outside the team: show, do not hide
			parts = append(parts, fmt.Sprintf("%s %d", id, t[id]))
		}
		lines = append(lines, fmt.Sprintf("Votes (epoch %d): %s", s.Epoch, strings.Join(parts, ", ")))
	}
	switch {
	case s.Winner != "":
		l := "Winner: " + s.Winner
		if s.WinnerLabel != "" {
			l += " (" + s.WinnerLabel + ")"
		}
		if s.How != "" {
			l += " — " + truncate(oneLine(s.How), 200)
		}
		lines = append(lines, l)
	default:
		lines = append(lines, "Winner: none")
	}
	if s.FinalAgent != "" {
		how := cmp.Or(s.FinalReason, "presentation")
		lines = append(lines, fmt.Sprintf("Final answer: by %s (%s), %d chars", s.FinalAgent, truncate(oneLine(how), 120), utf8.RuneCountInString(s.Final)))
	}
	return append(lines, a.notes...)
}

// wrap breaks s into lines of at most width runes at spaces, cutting words
// that are longer than a line.
func wrap(s string, width int) []string {
	var lines []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			lines = append(lines, string(cur))
			cur = nil
		}
	}
	for _, word := range strings.Fields(s) {
		r := []rune(word)
		for len(r) > width {
			flush()
			lines = append(lines, string(r[:width]))
			r = r[width:]
		}
		switch {
		case len(r) == 0:
		case len(cur) == 0:
			cur = r
		case len(cur)+1+len(r) <= width:
			cur = append(append(cur, ' '), r...)
		default:
			flush()
			cur = r
		}
	}
	flush()
	if lines == nil {
		lines = []string{""}
	}
	return lines
}

func writeWrapped(b *strings.Builder, s string, width int) {
	for _, l := range wrap(s, width) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
}

func pad(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}
