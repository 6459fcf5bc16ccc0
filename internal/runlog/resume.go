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
	if len(l.Config.Agents) == 0 {
		// Not even the config line is whole: the log says nothing, and
		// the caller falls back on what the session recorded.
		return nil, nil, fmt.Errorf("%s: the log ends before its config", ReplayName)
	}
	m := coord.New(l.Config)
	for _, r := range l.Steps {
		m.Step(r.In)
	}
	if len(l.Steps) == 0 {
		// Killed before its first step: the run carries what it was
		// seeded with (a resumed turn's answers), not nothing.
		m.Step(coord.Start{})
	}
	seeds, votes = m.Carried()
	return seeds, votes, nil
}
