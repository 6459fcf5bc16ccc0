package config

import (
	"errors"
	"testing"
)

func TestDiagnosticString(t *testing.T) {
	tests := []struct {
		d    Diagnostic
		want string
	}{
		{
			Diagnostic{File: "file.yaml", Line: 12, Col: 5, Key: "agents[1].backend.type",
				Message: "unknown backend type 'opena'", Suggestion: "did you mean 'openai'?"},
			"file.yaml:12:5: agents[1].backend.type: unknown backend type 'opena' — did you mean 'openai'?",
		},
		{
			Diagnostic{Severity: Warning, File: "f.yaml", Line: 3, Col: 1, Key: "colour", Message: "unknown key 'colour' is ignored"},
			"f.yaml:3:1: warning: colour: unknown key 'colour' is ignored",
		},
		{
			Diagnostic{Key: "ui.display_type", Message: "invalid display type 'gui'"},
			"ui.display_type: invalid display type 'gui'",
		},
		{
			Diagnostic{File: "f.yaml", Message: "config file is empty"},
			"f.yaml: config file is empty",
		},
		{
			Diagnostic{File: "f.yaml", Line: 2, Message: "two\nlines"},
			"f.yaml:2: two lines",
		},
	}
	for _, tc := range tests {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("String() = %q\nwant       %q", got, tc.want)
		}
	}
}

func TestDiagnosticsAsError(t *testing.T) {
	warnOnly := Diagnostics{{Severity: Warning, Message: "w"}}
	if warnOnly.HasErrors() || warnOnly.Err() != nil {
		t.Error("warnings alone are not an error")
	}
	ds := Diagnostics{
		{Severity: Error, File: "a.yaml", Line: 1, Col: 1, Message: "first"},
		{Severity: Warning, File: "a.yaml", Line: 2, Col: 1, Message: "not listed"},
		{Severity: Error, File: "a.yaml", Line: 3, Col: 1, Message: "second"},
	}
	err := ds.Err()
	if err == nil {
		t.Fatal("Err() = nil with errors present")
	}
	if got, want := err.Error(), "a.yaml:1:1: first\na.yaml:3:1: second"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var back Diagnostics
	if !errors.As(err, &back) || len(back) != 3 {
		t.Errorf("errors.As lost the diagnostics: %v", back)
	}
}
