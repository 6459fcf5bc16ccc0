package sandbox_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Commands and docker mode's containers run goroutines (output copies,
// the engine's connections); none may outlive the tests. The test binary
// is also the network probe some tests run inside the sandbox (net_test.go).
func TestMain(m *testing.M) {
	if spec := os.Getenv(probeEnv); spec != "" {
		os.Exit(probe(spec))
	}
	if spec := os.Getenv(benchEnv); spec != "" {
		os.Exit(benchClient(spec))
	}
	goleak.VerifyTestMain(m)
}
