package llm

import (
	"testing"
	"time"
)

// IdleLimit is the timeout Wrap applies (displays derive their stall
// threshold from it): the default for 0, none for a negative value.
func TestGuardsIdleLimit(t *testing.T) {
	for set, want := range map[time.Duration]time.Duration{0: DefaultIdleTimeout, -1: 0, 5 * time.Second: 5 * time.Second} {
		if got := (&Guards{IdleTimeout: set}).IdleLimit(); got != want {
			t.Errorf("IdleTimeout %s: IdleLimit = %s, want %s", set, got, want)
		}
	}
}
