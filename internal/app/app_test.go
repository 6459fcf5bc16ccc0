package app

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
