package eval

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Plot files of an evaluation's directory.
const (
	AccuracyCostPlot = "accuracy_cost.svg"
	AgreementPlot    = "agreement.svg"
)

// WriteReport writes report.md and its two plots into dir.
func WriteReport(dir string, res *Results) error {
	if err := writeAtomic(filepath.Join(dir, AccuracyCostPlot), []byte(AccuracyCostSVG(res))); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, AgreementPlot), []byte(AgreementSVG(res))); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, ReportFile), []byte(Markdown(res)))
}

// mdCell makes text safe inside a markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ")
}

func usd(x float64) string {
	switch {
	case x == 0:
		return "0"
	case x < 0.01:
		return fmt.Sprintf("%.5f", x)
	}
	return fmt.Sprintf("%.4f", x)
}

// Markdown is the report: what was evaluated, a table of the systems, each
// team against its best member, the plots, and how often systems agree.
func Markdown(res *Results) string {
	var b strings.Builder
	sp := res.Spec
	fmt.Fprintf(&b, "# massgen eval: %s\n\n", mdCell(filepath.Base(sp.Dataset)))
	fmt.Fprintf(&b, "- dataset: `%s` (%d items, sha256 %.12s)\n", mdCell(sp.Dataset), sp.Items, sp.DatasetSHA256)
	fmt.Fprintf(&b, "- scorer: `%s`; epochs: %d (reduced by %s)\n", mdCell(sp.Scorer), sp.Epochs, sp.Reducer)
	fmt.Fprintf(&b, "- intervals: %.0f%% percentile bootstrap over items, %d resamples, seed %d\n", sp.Bootstrap.Confidence*100, sp.Bootstrap.Resamples, sp.Bootstrap.Seed)
	if sp.TimeoutSeconds > 0 || sp.MaxCostUSD > 0 || sp.MaxTokens > 0 {
		fmt.Fprintf(&b, "- per run: deadline %gs, budget $%g, %d tokens (0: the config's)\n", sp.TimeoutSeconds, sp.MaxCostUSD, sp.MaxTokens)
	}
	fmt.Fprintf(&b, "- started %s, finished %s", sp.Started.Format("2006-01-02 15:04:05Z"), res.Finished.Format("2006-01-02 15:04:05Z"))
	if !res.Complete {
		b.WriteString(" — **incomplete**: some runs are missing (resume with `massgen eval --resume DIR`)")
	}
	b.WriteString("\n\n## Systems\n\n")
	b.WriteString("| system | kind | accuracy | interval | items | errors | cost (USD) | cost per correct | tokens per run | latency p50 / p90 / p99 (s) | restarts per run |\n")
	b.WriteString("|---|---|---:|---|---:|---:|---:|---:|---:|---|---:|\n")
	for _, s := range res.Systems {
		cpc := "—"
		if s.CostPerCorrectUSD != nil {
			cpc = usd(*s.CostPerCorrectUSD)
		}
		tpr := 0.0
		if s.Runs > 0 {
			tpr = float64(s.InputTokens+s.OutputTokens) / float64(s.Runs)
		}
		fmt.Fprintf(&b, "| %s | %s | %.3f | [%.3f, %.3f] | %d | %d | %s | %s | %.0f | %.2f / %.2f / %.2f | %.2f |\n",
			mdCell(s.Name), s.Kind, s.Accuracy, s.AccuracyCI[0], s.AccuracyCI[1], s.Items, s.Errors, usd(s.CostUSD), cpc, tpr,
			s.Latency.P50/1000, s.Latency.P90/1000, s.Latency.P99/1000, s.MeanRestarts)
	}
	if len(res.Comparisons) > 0 {
		b.WriteString("\n## Does the team beat its best member?\n\n")
		b.WriteString("| team | best member | team accuracy | member accuracy | difference | interval (paired) | items | verdict |\n")
		b.WriteString("|---|---|---:|---:|---:|---|---:|---|\n")
		for _, c := range res.Comparisons {
			fmt.Fprintf(&b, "| %s | %s | %.3f | %.3f | %+.3f | [%+.3f, %+.3f] | %d | %s |\n", mdCell(c.A), mdCell(c.B),
				c.AccuracyA, c.AccuracyB, c.Difference, c.CI[0], c.CI[1], c.Items, Verdict(c))
		}
	}
	b.WriteString("\n## Plots\n\n")
	fmt.Fprintf(&b, "![accuracy against cost](%s)\n\n![per-item scores](%s)\n", AccuracyCostPlot, AgreementPlot)
	if n := len(res.Systems); n >= 2 && n <= 12 {
		b.WriteString("\n## Agreement\n\nShare of the items on which two systems are both right or both wrong (a score of 0.5 or more counts as right).\n\n| |")
		for _, s := range res.Systems {
			fmt.Fprintf(&b, " %s |", mdCell(s.Name))
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", n) + "\n")
		right := map[[2]string]bool{}
		has := map[[2]string]bool{}
		for _, ir := range res.Items {
			k := [2]string{ir.System, ir.Item}
			right[k], has[k] = ir.Score >= 0.5, true
		}
		for _, a := range res.Systems {
			fmt.Fprintf(&b, "| %s |", mdCell(a.Name))
			for _, c := range res.Systems {
				same, n := 0, 0
				for _, ir := range res.Items {
					if ir.System != a.Name || !has[[2]string{c.Name, ir.Item}] {
						continue
					}
					n++
					if right[[2]string{a.Name, ir.Item}] == right[[2]string{c.Name, ir.Item}] {
						same++
					}
				}
				if n == 0 {
					b.WriteString(" — |")
				} else {
					fmt.Fprintf(&b, " %.2f |", float64(same)/float64(n))
				}
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Verdict says what a comparison's interval shows.
func Verdict(c Comparison) string {
	switch {
	case c.CI[0] > 0:
		return "better"
	case c.CI[1] < 0:
		return "worse"
	}
	return "no clear difference"
}

// WriteFile is os.WriteFile through a temporary file.
func WriteFile(path string, data []byte) error { return writeAtomic(path, data) }
