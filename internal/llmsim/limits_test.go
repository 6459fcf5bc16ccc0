package llmsim

import (
	"runtime"
	"strings"
	"testing"
)

// A scenario file goes through the same limits as a config before goccy
// decodes it (issue 17, finding 10): a billion laughs or a deep nesting
// is an error at its position, cheaply.
func TestScenarioBombsAreRefusedBeforeDecoding(t *testing.T) {
	laughs := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	for i, prev := 1, "a"; i < 9; i++ {
		name := string(rune('a' + i))
		laughs += name + ": &" + name + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = name
	}
	for name, doc := range map[string]string{
		"billion laughs": laughs,
		"deep flow":      strings.Repeat("[", 100_000),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ParseScenario([]byte(doc))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "scenario:") {
			t.Errorf("%s: %v, want an error at a position", name, err)
		}
		if used := after.TotalAlloc - before.TotalAlloc; used > 50<<20 {
			t.Errorf("%s: refusing it allocated %d MB", name, used>>20)
		}
	}
}
