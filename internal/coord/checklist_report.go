package coord

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The diagnostic report gate, the result payloads of submit_checklist and
// plateau detection, as upstream's checklist_tools_server.py
// (evaluate_checklist_submission) has them.
//
// The report gate (checklist_require_gap_report, on by default; off with
// gap_report_mode: none): before an agent's scores count, its diagnostic
// report — tasks/diagnostic_report.md in its workspace unless report_path
// names another file there — must exist and say something: at least
// ReportMinChars characters. The machine reads no file: the tool reads the
// report through the agent's Guard and puts what it found in the action
// (ReportFacts), so the log replays the same decision. An agent without a
// workspace (Report nil) has nowhere to write one, and the gate passes it.

// ReportMinChars is the shortest diagnostic report the gate accepts
// (upstream's _DIAGNOSTIC_REPORT_MIN_LENGTH, its length once trimmed).
const ReportMinChars = 100

// DefaultReportPath is where the prompt asks for the diagnostic report, and
// where the tool looks when report_path is not given.
const DefaultReportPath = "tasks/diagnostic_report.md"

// ReportFacts is what the submit_checklist tool found at the report's path.
type ReportFacts struct {
	// Path is the file read: report_path as given, or DefaultReportPath
	// when none was given and that file exists; "" when there is none.
	Path string `json:",omitempty"`
	// Chars counts the characters of its text once trimmed.
	Chars int `json:",omitempty"`
	// Problem says why the file could not be read ("" when it was).
	Problem string `json:",omitempty"`
}

// Error codes of a refused submit_checklist (upstream's error_code values).
const (
	ErrScoresInvalid      = "scores_type_invalid"
	ErrIncompleteAgent    = "incomplete_agent_criteria"
	ErrMissingAgentScores = "missing_agent_scores"
	ErrFlatDisallowed     = "flat_scores_disallowed"
	ErrMissingCriteria    = "missing_criteria_scores"
	ErrReportInvalid      = "diagnostic_report_invalid"
)

// ItemScore is one criterion's score in a checklist result.
type ItemScore struct {
	ID     string  `json:"id"`
	Score  float64 `json:"score"`
	Passed bool    `json:"passed"`
}

// Plateau is a failing criterion whose score has not risen by more than a
// point over the agent's last two accepted checklists.
type Plateau struct {
	ID           string    `json:"id"`
	Text         string    `json:"text"`
	Category     string    `json:"category"`
	ScoreHistory []float64 `json:"score_history"`
	CurrentScore float64   `json:"current_score"`
}

// reportEval is the report part of a result, as upstream reports it.
type reportEval struct {
	Provided   bool     `json:"provided"`
	Path       string   `json:"path"`
	Passed     bool     `json:"passed"`
	GateActive bool     `json:"gate_active"`
	Issues     []string `json:"issues"`
}

// checklistResult is submit_checklist's result payload: accepted, or a
// validation error to fix and resubmit.
type checklistResult struct {
	Status               string                        `json:"status"`
	RequiresResubmission bool                          `json:"requires_resubmission,omitempty"`
	ErrorCode            string                        `json:"error_code,omitempty"`
	Verdict              string                        `json:"verdict,omitempty"`
	Explanation          string                        `json:"explanation"`
	IncompleteScores     bool                          `json:"incomplete_scores,omitempty"`
	TrueCount            int                           `json:"true_count"`
	Required             int                           `json:"required"`
	Items                []ItemScore                   `json:"items"`
	FailedCriteria       []string                      `json:"failed_criteria"`
	PlateauedCriteria    []Plateau                     `json:"plateaued_criteria"`
	Report               *reportEval                   `json:"report,omitempty"`
	ReportGateTriggered  bool                          `json:"report_gate_triggered"`
	BestAgent            string                        `json:"best_agent,omitempty"`
	PerAgentScores       map[string]map[string]float64 `json:"per_agent_scores,omitempty"`
}

// message is the result as the tool returns it: a line in words, then the
// payload as JSON.
func (r checklistResult) message(line string) string {
	if r.Items == nil {
		r.Items = []ItemScore{}
	}
	if r.FailedCriteria == nil {
		r.FailedCriteria = []string{}
	}
	if r.PlateauedCriteria == nil {
		r.PlateauedCriteria = []Plateau{}
	}
	b, _ := json.Marshal(r)
	return line + "\n" + string(b)
}

// invalid is a refused submission with its error code.
func invalid(code string, required int, rep *reportEval, format string, args ...any) Verdict {
	expl := fmt.Sprintf(format, args...)
	r := checklistResult{Status: "validation_error", RequiresResubmission: true, ErrorCode: code, Explanation: expl,
		IncompleteScores: code != ErrReportInvalid && code != ErrScoresInvalid, Required: required, Report: rep,
		ReportGateTriggered: code == ErrReportInvalid}
	return Verdict{Outcome: Rejected, Message: r.message("submit_checklist: " + expl)}
}

// evalReport judges the report facts of a submission under the gate.
func (m *Machine) evalReport(f *ReportFacts) *reportEval {
	if f == nil {
		return nil
	}
	gate := m.cfg.Checklist.Report
	r := &reportEval{Provided: f.Path != "", Path: f.Path, Passed: true, GateActive: gate, Issues: []string{}}
	fail := func(issue string) {
		r.Issues = append(r.Issues, issue)
		if gate {
			r.Passed = false
		}
	}
	switch {
	case f.Path == "" && f.Problem == "":
		if gate {
			fail(fmt.Sprintf("Diagnostic report is required before submitting scores. Write a markdown diagnostic report "+
				"covering Failure Patterns, Root Causes, and Goal Alignment (one section per criterion) in %s, "+
				"then provide its path via report_path.", DefaultReportPath))
		}
	case f.Problem != "":
		fail(strings.TrimRight(f.Problem, ".") + ".")
	case f.Chars == 0:
		fail("Report file is empty.")
	case gate && f.Chars < ReportMinChars:
		fail("Report is too short to contain meaningful diagnostic analysis. Include Failure Patterns, Root Causes, and Goal Alignment sections.")
	}
	return r
}

// plateaued lists the failing criteria of items whose score has not risen
// by more than a point over each of the agent's last two accepted
// checklists (history, oldest first).
func plateaued(items []ItemScore, history [][]ItemScore, crit []Criterion) []Plateau {
	const rounds = 2
	if len(history) < rounds {
		return nil
	}
	var out []Plateau
	for i, it := range items {
		if it.Passed {
			continue
		}
		stuck := true
		var hist []float64
		for _, prev := range history[len(history)-rounds:] {
			if i >= len(prev) || prev[i].ID != it.ID || it.Score > prev[i].Score+1 {
				stuck = false
				break
			}
			hist = append(hist, prev[i].Score)
		}
		if stuck {
			out = append(out, Plateau{ID: it.ID, Text: crit[i].Text, Category: NormalCategory(crit[i].Category),
				ScoreHistory: append(hist, it.Score), CurrentScore: it.Score})
		}
	}
	return out
}

// plateauLine is the plateau part of an iterate explanation, as upstream
// writes score trajectories: "E3 (primary, scores: 6→6→7)".
func plateauLine(ps []Plateau) string {
	if len(ps) == 0 {
		return ""
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		s := make([]string, len(p.ScoreHistory))
		for j, v := range p.ScoreHistory {
			s[j] = fmt.Sprintf("%g", v)
		}
		parts[i] = fmt.Sprintf("%s (%s, scores: %s)", p.ID, p.Category, strings.Join(s, "→"))
	}
	return fmt.Sprintf("Criteria %s have plateaued: rethink the approach for them rather than polishing it. ", strings.Join(parts, ", "))
}
