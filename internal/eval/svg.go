package eval

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// The plots are drawn by hand: a few dozen lines of SVG spare the binary a
// plotting library, and the files are small, diffable and open in any
// browser or markdown viewer.

const svgFont = `font-family="Helvetica,Arial,sans-serif"`

func esc(s string) string { return html.EscapeString(s) }

// niceTicks are about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	// The last tick is at or past hi, so the axis covers every point.
	for v := math.Floor(lo/step) * step; ; v += step {
		ticks = append(ticks, v)
		if v >= hi-step*1e-9 {
			return ticks
		}
	}
}

func tickLabel(v float64) string {
	s := fmt.Sprintf("%.6g", v)
	if math.Abs(v) < 1e-12 {
		return "0"
	}
	return s
}

// AccuracyCostSVG plots each system's accuracy (with its interval bar)
// against its mean cost per run; when no run cost anything (unpriced
// models, the simulator), against its mean tokens per run instead.
func AccuracyCostSVG(res *Results) string {
	const w, h, left, right, top, bottom = 720, 440, 70, 180, 40, 60
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	xs := make([]float64, len(res.Systems))
	useCost := false
	for _, s := range res.Systems {
		if s.CostUSD > 0 {
			useCost = true
		}
	}
	xlabel := "mean cost per run (USD)"
	if !useCost {
		xlabel = "mean tokens per run (no run was priced)"
	}
	for i, s := range res.Systems {
		if s.Runs == 0 {
			continue
		}
		if useCost {
			xs[i] = s.CostUSD / float64(s.Runs)
		} else {
			xs[i] = float64(s.InputTokens+s.OutputTokens) / float64(s.Runs)
		}
	}
	xmax := 0.0
	for _, x := range xs {
		xmax = max(xmax, x)
	}
	xt := niceTicks(0, max(xmax*1.1, 1e-9), 5)
	xhi := xt[len(xt)-1]
	px := func(x float64) float64 { return float64(left) + x/xhi*pw }
	py := func(y float64) float64 { return float64(top) + (1-y)*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="12">`+"\n", w, h, w, h, svgFont)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">Accuracy against cost (bars: %.0f%% bootstrap interval)</text>`+"\n", left, res.Spec.Bootstrap.Confidence*100)
	for _, y := range niceTicks(0, 1, 5) {
		fmt.Fprintf(&b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/><text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n",
			left, px(xhi), py(y), py(y), left-6, py(y), tickLabel(y))
	}
	for _, x := range xt {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#e5e5e5"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n",
			px(x), px(x), top, py(0), px(x), py(0)+18, tickLabel(x))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", float64(left)+pw/2, h-16, esc(xlabel))
	fmt.Fprintf(&b, `<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">accuracy</text>`+"\n", float64(top)+ph/2)
	palette := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}
	teamColour := map[string]string{}
	for _, s := range res.Systems {
		if s.Kind == "team" {
			teamColour[s.Name] = palette[len(teamColour)%len(palette)]
		}
	}
	for i, s := range res.Systems {
		if s.Runs == 0 {
			continue
		}
		c := teamColour[s.Name]
		if s.Kind == "member" {
			c = cmpStr(teamColour[s.Team], "#555")
		}
		// Systems at the same cost (a team's members often are) are
		// set side by side, so their bars do not hide each other.
		same := 0
		for k := range i {
			if res.Systems[k].Runs > 0 && math.Abs(px(xs[k])-px(xs[i])) < 6 {
				same++
			}
		}
		x := px(xs[i]) + float64(same)*9
		fmt.Fprintf(&b, `<g><title>%s: accuracy %.3f [%.3f, %.3f]</title>`, esc(s.Name), s.Accuracy, s.AccuracyCI[0], s.AccuracyCI[1])
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`, x, x, py(s.AccuracyCI[0]), py(s.AccuracyCI[1]), c)
		for _, y := range s.AccuracyCI {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`, x-5, x+5, py(y), py(y), c)
		}
		if s.Kind == "team" {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="6" fill="%s"/>`, x, py(s.Accuracy), c)
		} else {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="white" stroke="%s" stroke-width="2"/>`, x, py(s.Accuracy), c)
		}
		fmt.Fprintf(&b, "</g>\n")
	}
	// The legend names every system beside the plot (labels on the points
	// would collide: members often share a cost).
	ly := top + 6
	for i, s := range res.Systems {
		c := teamColour[s.Name]
		fill := c
		if s.Kind == "member" {
			c, fill = cmpStr(teamColour[s.Team], "#555"), "white"
		}
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="5" fill="%s" stroke="%s" stroke-width="2"/><text x="%d" y="%d" dominant-baseline="middle">%s (%.2f)</text>`+"\n",
			w-right+16, ly+i*18, fill, c, w-right+26, ly+i*18, esc(short(s.Name, 20)), s.Accuracy)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// MaxHeatRows bounds the heat map's rows; the rest of the items are
// counted in its title.
const MaxHeatRows = 400

// AgreementSVG is the per-item heat map: a row per item (hardest first:
// lowest mean score over the systems), a column per system, each cell the
// item's score for the system, red (0) through yellow to green (1), grey
// when the system has no run of it.
func AgreementSVG(res *Results) string {
	score := map[[2]string]float64{}
	var items []string
	seen := map[string]bool{}
	for _, ir := range res.Items {
		score[[2]string{ir.Item, ir.System}] = ir.Score
		if !seen[ir.Item] {
			seen[ir.Item] = true
			items = append(items, ir.Item)
		}
	}
	avg := func(id string) float64 {
		s, n := 0.0, 0
		for _, sys := range res.Systems {
			if v, ok := score[[2]string{id, sys.Name}]; ok {
				s += v
				n++
			}
		}
		return s / float64(max(n, 1))
	}
	slices.SortStableFunc(items, func(a, b string) int {
		if d := avg(a) - avg(b); d != 0 {
			return int(math.Copysign(1, d))
		}
		return 0
	})
	dropped := 0
	if len(items) > MaxHeatRows {
		dropped = len(items) - MaxHeatRows
		items = items[:MaxHeatRows]
	}
	cell := 16
	if len(items) > 100 {
		cell = 8
	}
	const left, top = 110, 150
	w := left + cell*len(res.Systems) + 20
	w = max(w, 420)
	h := top + cell*len(items) + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="11">`+"\n", w, h, w, h, svgFont)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	title := "Per-item scores (rows: items, hardest first)"
	if dropped > 0 {
		title += fmt.Sprintf("; %d more items not shown", dropped)
	}
	fmt.Fprintf(&b, `<text x="8" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", esc(title))
	for j, s := range res.Systems {
		x := left + j*cell + cell/2
		fmt.Fprintf(&b, `<text transform="translate(%d %d) rotate(-60)">%s</text>`+"\n", x, top-6, esc(short(s.Name, 24)))
	}
	for i, id := range items {
		y := top + i*cell
		if cell >= 12 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" dominant-baseline="middle">%s</text>`, left-6, y+cell/2, esc(short(id, 16)))
		}
		for j, s := range res.Systems {
			v, ok := score[[2]string{id, s.Name}]
			fill := "#cccccc"
			if ok {
				fill = heatColour(v)
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="white"><title>%s · %s: %.2f</title></rect>`,
				left+j*cell, y, cell, cell, fill, esc(id), esc(s.Name), v)
		}
		b.WriteByte('\n')
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// heatColour runs from red (0) through yellow (0.5) to green (1).
func heatColour(v float64) string {
	v = math.Max(0, math.Min(1, v))
	lerp := func(a, b [3]float64, t float64) string {
		return fmt.Sprintf("#%02x%02x%02x", int(a[0]+(b[0]-a[0])*t), int(a[1]+(b[1]-a[1])*t), int(a[2]+(b[2]-a[2])*t))
	}
	red, yellow, green := [3]float64{215, 48, 39}, [3]float64{254, 224, 139}, [3]float64{26, 152, 80}
	if v < 0.5 {
		return lerp(red, yellow, v*2)
	}
	return lerp(yellow, green, (v-0.5)*2)
}
