package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/event"
)

// massgen.log said attempt=0 for the events before the first attempt
// (run_started) and for a single agent's direct answer, where every other
// file says 1: attempts count from 1 everywhere.
func TestMassgenLogCountsAttemptsFromOne(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := event.NewBroker()
	sub := b.Subscribe(event.Deltas...)
	done := make(chan struct{})
	go func() { defer close(done); logEvents(log, sub) }()
	b.Publish(event.RunStarted{Question: "q", Team: []event.AgentInfo{{ID: "a"}}})
	b.Publish(event.FinalStarted{Agent: "a", Mode: "direct"}) // direct mode: no attempt set by the emitter
	b.Publish(event.AnswerAccepted{Header: event.Header{Attempt: 2}, Agent: "a", Label: "agent1.1", AnonLabel: "agent1"})
	b.Close()
	<-done
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("massgen.log:\n%s", buf.String())
	}
	for i, want := range []string{"attempt=1", "attempt=1", "attempt=2"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d lacks %s: %s", i, want, lines[i])
		}
	}
	if !strings.Contains(lines[2], `msg="a answered agent1.1"`) || !strings.Contains(lines[2], "label=agent1.1") {
		t.Errorf("answer line: %s", lines[2])
	}
}
