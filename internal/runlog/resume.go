package runlog

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/massgen/massgen/internal/coord"
)

// Carried replays the replay log of the run logged in dir and returns what
// a run resumed after it carries: its current answers and the votes of its
// last epoch (coord.Machine.Carried). The replay log is written before the
// run acts on any step, so what it holds is everything the run had
// decided, even after a kill -9; a last line cut short is left out.
func Carried(dir string) (seeds []coord.Seed, votes []coord.Vote, err error) {
	f, err := os.Open(filepath.Join(dir, ReplayName))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	l, err := coord.ReadLog(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", ReplayName, err)
	}
	m := coord.New(l.Config)
	for _, r := range l.Steps {
		m.Step(r.In)
	}
	seeds, votes = m.Carried()
	return seeds, votes, nil
}
