// Package simtest starts the simulator for tests: one call instead of the
// parse, start and clean-up every test package would otherwise write.
package simtest

import (
	"testing"

	"github.com/massgen/massgen/internal/llmsim"
)

// Scenario parses a scenario written in YAML; "" is nil, the default
// policy for every model. A scenario that does not parse fails the test.
func Scenario(t testing.TB, yaml string) *llmsim.Scenario {
	t.Helper()
	if yaml == "" {
		return nil
	}
	sc, err := llmsim.ParseScenario([]byte(yaml))
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	return sc
}

// Start serves a simulator for the scenario on a free loopback port until
// the test ends, and returns it with its base URL (…/v1).
func Start(t testing.TB, scenario string) (*llmsim.Server, string) {
	t.Helper()
	sim := llmsim.New(Scenario(t, scenario))
	base, err := sim.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim, base
}
