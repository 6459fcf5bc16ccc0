package massgen_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen"
)

// A config with a key massgen accepts and ignores: resolving it raises a
// warning before the run starts.
var warnedYAML = []byte(`agents:
  - id: a
    backend:
      type: sim
      model: sim-a
      upload_files: true
`)

const warnedText = "agents[0].backend.upload_files: 'upload_files' is accepted but ignored: this version does not support file uploads yet"

func TestAWarningReachesTheGoAPIAsAnEvent(t *testing.T) {
	var events []massgen.Event
	var lines bytes.Buffer
	res, err := massgen.Run(t.Context(), "What is 2+2?", massgen.Options{ConfigYAML: warnedYAML, NoLogs: true, WorkDir: t.TempDir(),
		Getenv: noEnv, Warnings: &lines, OnEvent: func(e massgen.Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 2 || events[0].Type != massgen.EventWarning || events[1].Type != massgen.EventRunStarted {
		t.Fatalf("events start %v, want a warning then run_started", slices.Collect(func(yield func(massgen.EventType) bool) {
			for _, e := range events[:min(3, len(events))] {
				yield(e.Type)
			}
		}))
	}
	w := events[0]
	if w.Text != warnedText || w.Where != "config.yaml:6:7" || w.Seq != 1 || w.V != massgen.EventSchema {
		t.Errorf("warning event %+v", w)
	}
	want := "config.yaml:6:7: warning: " + warnedText
	if !slices.Equal(res.Warnings, []string{want}) {
		t.Errorf("Result.Warnings = %q, want %q", res.Warnings, want)
	}
	if lines.String() != want+"\n" {
		t.Errorf("Options.Warnings got %q, want the line once", lines.String())
	}
}

func TestAWarningReachesOptionsWarningsWithoutOnEvent(t *testing.T) {
	var lines bytes.Buffer
	res, err := massgen.Run(t.Context(), "What is 2+2?", massgen.Options{ConfigYAML: warnedYAML, NoLogs: true, WorkDir: t.TempDir(),
		Getenv: noEnv, Warnings: &lines})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(lines.String(), warnedText) != 1 || len(res.Warnings) != 1 {
		t.Errorf("Options.Warnings got %q, Result.Warnings %q: want the warning once in each", lines.String(), res.Warnings)
	}
}
