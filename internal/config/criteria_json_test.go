package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/coord"
)

func TestCriteriaFromJSONTakesUpstreamsForms(t *testing.T) {
	want := []coord.Criterion{{Text: "Cites sources", Category: coord.CatPrimary}, {Text: "Is short", Category: coord.CatStandard},
		{Text: "Has a diagram", Category: coord.CatStretch}}
	for _, src := range []string{
		`[{"text": "Cites sources", "category": "primary"}, {"description": "Is short", "category": "must"}, {"name": "Has a diagram", "category": "could"}]`,
		`{"aspiration": "x", "criteria": [{"text": "Cites sources", "category": "primary"}, {"text": "Is short"}, {"text": "Has a diagram", "category": "stretch"}]}`,
	} {
		got, err := CriteriaFromJSON([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", src, d)
		}
	}
	for src, msg := range map[string]string{
		`{"criteria": `:                    "not valid JSON",
		`{"items": []}`:                    `{"criteria": [...]}`,
		`[]`:                               "no criteria",
		`["just text"]`:                    "criterion 1 must be an object",
		`[{"text": "a"}, {"category": 1}]`: "criterion 2 must be an object",
		`[{"text": "a"}, {"category": "primary"}]`: `criterion 2 has no "text"`,
	} {
		if _, err := CriteriaFromJSON([]byte(src)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", src, err, msg)
		}
	}
}
