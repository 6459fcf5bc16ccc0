package sandbox_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Commands and docker mode's containers run goroutines (output copies,
// the engine's connections); none may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
