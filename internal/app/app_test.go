package app

import (
	"testing"

	"go.uber.org/goleak"
)

// The genai SDK (Gemini adapter) starts an opencensus worker at init time.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
