package eval

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

func fakeResults(names []string, scores map[string][]float64, kinds map[string]string) *Results {
	res := &Results{Schema: Schema, Version: SchemaVersion, Spec: Spec{Bootstrap: DefaultBootstrap, Epochs: 1, Reducer: "mean"}}
	for _, n := range names {
		s := SystemSummary{System: System{Name: n, Kind: kinds[n]}, Runs: len(scores[n]), Items: len(scores[n])}
		s.Accuracy, s.AccuracyCI[0], s.AccuracyCI[1] = res.Spec.Bootstrap.MeanCI(scores[n])
		res.Systems = append(res.Systems, s)
		for i, v := range scores[n] {
			res.Items = append(res.Items, ItemResult{Item: fmt.Sprint(i), System: n, Score: v})
		}
	}
	return res
}

// compare pairs systems by name, or the two teams; the paired interval
// of a system that is right on every item the other is, and on ten more
// of forty, lies above zero.
func TestCompareResults(t *testing.T) {
	a := make([]float64, 40)
	b := make([]float64, 40)
	for i := range a {
		a[i] = float64(i % 2)
		b[i] = a[i]
		if i%4 == 1 {
			b[i] = 0 // A is right on 10 items B misses
		}
	}
	ra := fakeResults([]string{"t"}, map[string][]float64{"t": a}, map[string]string{"t": "team"})
	rb := fakeResults([]string{"t"}, map[string][]float64{"t": b}, map[string]string{"t": "team"})
	cs, err := CompareResults(ra, rb)
	if err != nil || len(cs) != 1 {
		t.Fatal(err, cs)
	}
	if c := cs[0]; c.Difference != 0.25 || c.CI[0] <= 0 || c.CI[1] > 0.5 || c.Items != 40 || Verdict(c) != "better" {
		t.Errorf("%+v", c)
	}
	rb.Systems[0].Name = "other"
	for i := range rb.Items {
		rb.Items[i].System = "other"
	}
	if cs, err := CompareResults(ra, rb); err != nil || cs[0].A != "t" || cs[0].B != "other" {
		t.Errorf("two teams of different names: %v %+v", err, cs)
	}
	rb.Systems[0].Kind = "member"
	if _, err := CompareResults(ra, rb); err == nil || !strings.Contains(err.Error(), "share no system") {
		t.Errorf("nothing to pair: %v", err)
	}
	md := CompareMarkdown("a.json", "b.json", ra, fakeResults([]string{"t"}, map[string][]float64{"t": b}, map[string]string{"t": "team"}), cs)
	if !strings.Contains(md, "| t | t |") {
		t.Errorf("%s", md)
	}
}

// The plots are well-formed SVG whatever the names hold: text from the
// dataset and the configs is escaped.
func TestPlotsEscapeAndParse(t *testing.T) {
	evil := `<script>alert(1)</script>&"`
	res := fakeResults([]string{evil, "m"}, map[string][]float64{evil: {1, 0, 1}, "m": {0, 0, 1}}, map[string]string{evil: "team", "m": "member"})
	res.Systems[1].Team = evil
	res.Items[0].Item = evil
	for name, svg := range map[string]string{"accuracy": AccuracyCostSVG(res), "agreement": AgreementSVG(res)} {
		if strings.Contains(svg, "<script>") {
			t.Errorf("%s: unescaped name", name)
		}
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not XML: %v", name, err)
			}
		}
	}
	res.Systems[1].Name = "a|b\nc"
	if md := Markdown(res); !strings.Contains(md, `| a\|b c | member |`) {
		t.Errorf("a name with | and a newline breaks the table:\n%s", md)
	}
}
