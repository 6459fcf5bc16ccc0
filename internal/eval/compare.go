package eval

import (
	"fmt"
	"path/filepath"
	"strings"
)

// CompareResults puts two result files side by side: each system of A
// against the system of the same name in B (when they share none and each
// has one team, those two teams), the accuracy difference A−B on the items
// both ran, with a paired bootstrap interval (A's bootstrap settings).
func CompareResults(a, b *Results) ([]Comparison, error) {
	scores := func(r *Results) map[string]map[string]float64 {
		m := map[string]map[string]float64{}
		for _, ir := range r.Items {
			if m[ir.System] == nil {
				m[ir.System] = map[string]float64{}
			}
			m[ir.System][ir.Item] = ir.Score
		}
		return m
	}
	sa, sb := scores(a), scores(b)
	bs := a.Spec.Bootstrap
	if bs.Resamples == 0 {
		bs = DefaultBootstrap
	}
	var out []Comparison
	for _, s := range a.Systems {
		if _, ok := sb[s.Name]; ok {
			out = append(out, Compare(bs, s.Name, s.Name, sa[s.Name], sb[s.Name]))
		}
	}
	if len(out) == 0 {
		ta, tb := teams(a), teams(b)
		if len(ta) == 1 && len(tb) == 1 {
			out = append(out, Compare(bs, ta[0], tb[0], sa[ta[0]], sb[tb[0]]))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the two results share no system by name (A has %s; B has %s)", names(a), names(b))
	}
	return out, nil
}

func teams(r *Results) []string {
	var out []string
	for _, s := range r.Systems {
		if s.Kind == "team" {
			out = append(out, s.Name)
		}
	}
	return out
}

func names(r *Results) string {
	var out []string
	for _, s := range r.Systems {
		out = append(out, s.Name)
	}
	return strings.Join(out, ", ")
}

// CompareMarkdown is the side-by-side table of CompareResults.
func CompareMarkdown(pathA, pathB string, a, b *Results, cs []Comparison) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# massgen eval compare\n\n- A: `%s` (%s, scorer %s, %d items)\n- B: `%s` (%s, scorer %s, %d items)\n",
		mdCell(pathA), mdCell(filepath.Base(a.Spec.Dataset)), mdCell(a.Spec.Scorer), a.Spec.Items,
		mdCell(pathB), mdCell(filepath.Base(b.Spec.Dataset)), mdCell(b.Spec.Scorer), b.Spec.Items)
	if a.Spec.DatasetSHA256 != b.Spec.DatasetSHA256 {
		sb.WriteString("- **the datasets differ**: only items with the same id are paired\n")
	}
	if a.Spec.Scorer != b.Spec.Scorer {
		sb.WriteString("- **the scorers differ**\n")
	}
	cost := func(r *Results, name string) (acc float64, ci [2]float64, c string) {
		for _, s := range r.Systems {
			if s.Name == name {
				c = "—"
				if s.CostPerCorrectUSD != nil {
					c = usd(*s.CostPerCorrectUSD)
				}
				return s.Accuracy, s.AccuracyCI, c
			}
		}
		return 0, [2]float64{}, "—"
	}
	sb.WriteString("\n| system (A) | system (B) | A accuracy | B accuracy | A cost per correct | B cost per correct | A − B (paired items) | interval | items | verdict |\n")
	sb.WriteString("|---|---|---:|---:|---:|---:|---:|---|---:|---|\n")
	for _, c := range cs {
		accA, ciA, cpcA := cost(a, c.A)
		accB, ciB, cpcB := cost(b, c.B)
		fmt.Fprintf(&sb, "| %s | %s | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] | %s | %s | %+.3f | [%+.3f, %+.3f] | %d | %s |\n",
			mdCell(c.A), mdCell(c.B), accA, ciA[0], ciA[1], accB, ciB[0], ciB[1], cpcA, cpcB, c.Difference, c.CI[0], c.CI[1], c.Items, Verdict(c))
	}
	return sb.String()
}
