package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/orchestrator"
)

func TestUsageLineSaysEachAgentsToolUse(t *testing.T) {
	res := &orchestrator.Result{
		Usage:    map[string]llm.Usage{"a": {InputTokens: 120, OutputTokens: 30}, "b": {InputTokens: 80, OutputTokens: 10}},
		Cost:     map[string]float64{"a": 0.002, "b": 0.001},
		Tools:    map[string]orchestrator.ToolUse{"a": {Calls: 3, Errors: 1, Rounds: 2}, "b": {}},
		Duration: 1500 * time.Millisecond,
	}
	var b strings.Builder
	printUsage(&b, res)
	want := "usage: 200 input + 40 output tokens, $0.0030 in 1.5s (a 120/30 $0.0020 with 3 tool calls (1 failed) in 2 rounds, b 80/10 $0.0010)\n"
	if got := b.String(); got != want {
		t.Errorf("usage line\n got %q\nwant %q", got, want)
	}
}

// A run on the simulator takes milliseconds: the usage line says so
// instead of "in 0.0s".
func TestRunTimeNeverReadsZero(t *testing.T) {
	for d, want := range map[time.Duration]string{
		40 * time.Microsecond:   "1ms",
		45 * time.Millisecond:   "45ms",
		1500 * time.Millisecond: "1.5s",
		125 * time.Second:       "2m05s",
	} {
		if got := runTime(d); got != want {
			t.Errorf("runTime(%s) = %q, want %q", d, got, want)
		}
	}
}
