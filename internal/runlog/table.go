package runlog

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
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
func (a *attempt) note(agent, text string) {
	if agent == "" {
		a.notes = append(a.notes, text)
		return
	}
	title := a.section
	if title == "" {
		title = "Epoch " + itoa(a.epoch)
		if a.epoch == 0 {
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

func (w *Writer) writeTable() error {
	return writeAtomic(filepath.Join(w.dir, "coordination_table.txt"), []byte(w.renderTable()))
}

// renderTable draws every attempt as a box table, one column per agent in
// config order, then a footer with votes, winner and the run's outcome.
func (w *Writer) renderTable() string {
	var b strings.Builder
	headers := make([]string, len(w.order))
	for i, id := range w.order {
		headers[i] = w.header(id)
	}
	widths := w.columnWidths(headers)
	total := 1
	for _, cw := range widths {
		total += cw + 3
	}
	textWidth := max(total, 72)

	b.WriteString("MassGen coordination table\n")
	writeWrapped(&b, "Question: "+truncate(oneLine(w.question), 400), textWidth)
	writeWrapped(&b, "Log: "+w.dir, textWidth)

	multi := w.meta.Attempts || len(w.attempts) > 1
	for _, a := range w.attempts {
		b.WriteByte('\n')
		if multi {
			fmt.Fprintf(&b, "=== Attempt %d ===\n", a.n)
		}
		if len(widths) > 0 {
			w.renderGroups(&b, a, headers, widths, total)
		}
		for _, line := range w.attemptFooter(a) {
			writeWrapped(&b, line, textWidth)
		}
	}

	b.WriteByte('\n')
	status := "Status: " + w.status
	if w.finalErr != "" {
		status += " — " + truncate(oneLine(w.finalErr), 200)
	}
	end := w.finishedAt
	if end.IsZero() {
		end = w.now()
	}
	status += fmt.Sprintf(" (duration %s)", end.Sub(w.started).Round(100*time.Millisecond))
	writeWrapped(&b, status, textWidth)
	writeWrapped(&b, fmt.Sprintf("Events: %d recorded, %d streaming deltas (%d dropped)", len(w.events), w.deltas, w.dropped), textWidth)
	return b.String()
}

func (w *Writer) header(id string) string {
	ag := w.agents[id]
	h := id
	switch {
	case ag.info.Backend != "" && ag.info.Model != "":
		h += " (" + ag.info.Backend + "/" + ag.info.Model + ")"
	case ag.info.Backend != "" || ag.info.Model != "":
		h += " (" + ag.info.Backend + ag.info.Model + ")"
	}
	if ag.info.Simulated {
		h += " [sim]"
	}
	return h
}

// columnWidths fits each column to its longest header or cell, capped so
// the whole table stays within the budget; longer cells wrap.
func (w *Writer) columnWidths(headers []string) []int {
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
	for i, id := range w.order {
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

func (w *Writer) renderGroups(b *strings.Builder, a *attempt, headers []string, widths []int, total int) {
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
		cols := make([][]string, len(w.order))
		for i, id := range w.order {
			for _, c := range g.cells[id] {
				cols[i] = append(cols[i], wrap(c, widths[i])...)
			}
		}
		row(cols)
		rule("-")
	}
}

// attemptFooter summarises one attempt: the final epoch's tally (the only
// votes that count), the winner and how it was chosen, the final answer.
func (w *Writer) attemptFooter(a *attempt) []string {
	var lines []string
	t := tally(a.epochVotes, a.hasAnswer)
	if len(t) == 0 {
		lines = append(lines, "Votes: none")
	} else {
		var parts []string
		for _, id := range w.order {
			if n, ok := t[id]; ok {
				parts = append(parts, fmt.Sprintf("%s %d", id, n))
				delete(t, id)
			}
		}
		for id, n := range t { // votes for ids outside the team: show, do not hide
			parts = append(parts, fmt.Sprintf("%s %d", id, n))
		}
		lines = append(lines, fmt.Sprintf("Votes (epoch %d): %s", a.epoch, strings.Join(parts, ", ")))
	}
	switch {
	case a.winner != "":
		l := "Winner: " + a.winner
		if a.winReason != "" {
			l += " — " + truncate(oneLine(a.winReason), 200)
		}
		lines = append(lines, l)
	default:
		lines = append(lines, "Winner: none")
	}
	if a.finalAgent != "" {
		how := a.finalReason
		if how == "" {
			how = "presentation"
		}
		lines = append(lines, fmt.Sprintf("Final answer: by %s (%s), %d chars", a.finalAgent, truncate(oneLine(how), 120), a.finalChars))
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
