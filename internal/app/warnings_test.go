package app

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/event"
)

const warnedYAML = `agents:
  - id: a
    backend:
      type: sim
      model: sim-a
      upload_files: true
`

// collect observes a run and keeps every event but the deltas.
func collect(events *[]event.Event) func(*event.Subscription, RunInfo) {
	return func(sub *event.Subscription, _ RunInfo) {
		for {
			e, ok := sub.Next(nil)
			if !ok {
				return
			}
			*events = append(*events, e)
		}
	}
}

// Warnings of the config, of the question's @references and of a
// component writing "warning:" lines (the telemetry exporter, which this
// test binary does not link) are events of the run, before run_started,
// and nothing is written to stderr: the observer shows them.
func TestAppWarningsAreEventsOfTheRun(t *testing.T) {
	var events []event.Event
	var stderr bytes.Buffer
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}
	env := &Env{Getenv: func(k string) string { return vars[k] }, Stderr: &stderr, WorkDir: t.TempDir()}
	out, err := Execute(t.Context(), env, Request{
		Question: "Read @nowhere.txt",
		Team:     Team{ConfigYAML: []byte(warnedYAML)},
		Files:    Files{MissingRefs: []string{"@nowhere.txt"}},
		Logging:  Logging{NoLogs: true},
		Observer: Observer{
			Observe:      collect(&events),
			ObserveSkips: event.Deltas,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range events {
		if w, ok := e.(event.Warning); ok {
			texts = append(texts, w.Line())
			continue
		}
		if e.Type() != event.TypeRunStarted {
			t.Fatalf("%s came before run_started", e.Type())
		}
		break
	}
	want := []string{
		"config.yaml:6:7: warning: agents[0].backend.upload_files: 'upload_files' is accepted but ignored: this version does not support file uploads yet",
		"warning: @nowhere.txt in the question names no file or directory in " + env.WorkDir + ": nothing is shared for it",
	}
	if len(texts) != 3 || !slices.Equal(texts[:2], want) || !strings.Contains(texts[2], "OpenTelemetry endpoint is set") {
		t.Errorf("warnings before run_started:\n%s\nwant:\n%s\nand the OpenTelemetry one", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(out.Warnings, texts) || len(out.LateWarnings) != 0 {
		t.Errorf("Outcome.Warnings = %q (late %q), want the events' %q", out.Warnings, out.LateWarnings, texts)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr = %q: an observed run's warnings are its events only", stderr.String())
	}
}

// With no observer the warnings have no other reader: they are printed
// on Env.Stderr too, once each.
func TestAnUnobservedRunPrintsItsWarnings(t *testing.T) {
	var stderr bytes.Buffer
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: t.TempDir()}
	out, err := Execute(t.Context(), env, Request{Question: "q", Team: Team{ConfigYAML: []byte(warnedYAML)}, Logging: Logging{NoLogs: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Warnings) != 1 || stderr.String() != out.Warnings[0]+"\n" {
		t.Errorf("stderr = %q, Outcome.Warnings = %q: want the one warning on both", stderr.String(), out.Warnings)
	}
}

// A run that never starts has no events: the warnings found before it
// failed are printed on stderr, as the error is returned.
func TestTheWarningsOfARunThatNeverStartsGoToStderr(t *testing.T) {
	var stderr bytes.Buffer
	var events []event.Event
	env := &Env{Getenv: func(string) string { return "" }, Stderr: &stderr, WorkDir: t.TempDir()}
	_, err := Execute(t.Context(), env, Request{
		Question: "q",
		Team:     Team{ConfigYAML: []byte(warnedYAML + "  - id: b\n    backend: {type: openai, model: gpt-4o}\n")},
		Logging:  Logging{NoLogs: true},
		Observer: Observer{Observe: collect(&events)},
	})
	if err == nil || !strings.Contains(err.Error(), "needs an API key") {
		t.Fatalf("err = %v, want the missing key", err)
	}
	if !strings.Contains(stderr.String(), "warning: agents[0].backend.upload_files") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr = %q, want the config's warning once", stderr.String())
	}
	if len(events) != 0 {
		t.Errorf("a run that never started had events: %v", events)
	}
}

func TestLineWriterTurnsLinesIntoWarnings(t *testing.T) {
	w := &warnings{}
	lw := &lineWriter{w: w}
	for _, p := range []string{"warning: one", " half", "\nwarning: two\n\n", "three"} {
		lw.Write([]byte(p))
	}
	all, late := w.lines()
	if want := []string{"warning: one half", "warning: two"}; !slices.Equal(all, want) || late != nil {
		t.Errorf("lines = %q (late %q), want %q: a line counts once it ends", all, late, want)
	}
}
