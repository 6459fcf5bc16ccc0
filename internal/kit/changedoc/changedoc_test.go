package changedoc

import (
	"strings"
	"testing"
)

// The journal section names the file in the workspace and where the
// shown answers' journals are; the fast iteration section is the quick
// impact check.
func TestSections(t *testing.T) {
	s := Section("/runs/view/a")
	for _, want := range []string{"tasks/changedoc.md", "/runs/view/a/<label>/tasks/changedoc.md", "DEC-001", "consolidate", "never in a context path"} {
		if !strings.Contains(s, want) {
			t.Errorf("Section lacks %q:\n%s", want, s)
		}
	}
	if f := FastIteration(); !strings.Contains(f, "Quick impact check") || !strings.Contains(f, "voting may be the better choice") {
		t.Errorf("FastIteration:\n%s", f)
	}
}
