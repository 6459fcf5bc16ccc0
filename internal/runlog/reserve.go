package runlog

import (
	"os"
	"path/filepath"
	"sync"
)

// reserveSize is the space a run's log keeps for its last files: status.json
// (a few KiB), vote.json and, as far as it goes, the final answer.
const reserveSize = 64 << 10

// reserveName is the file that holds the reserve in the log directory.
const reserveName = ".space_reserve"

// reserve is space taken on the log's disk at the start of the run and
// given back when a file a finished run must have cannot be written for
// want of space (or at Close): a run that fills the disk still records how
// it ended.
type reserve struct {
	mu   sync.Mutex
	path string
}

// newReserve writes size bytes to a file in dir (zeros are written, not
// a sparse hole, so the blocks are the file's). It returns nil when the
// disk has not that much room left: the run goes on without one.
func newReserve(dir string, size int) *reserve {
	path := filepath.Join(dir, reserveName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil
	}
	_, werr := f.Write(make([]byte, size))
	if err := f.Close(); werr != nil || err != nil {
		os.Remove(path)
		return nil
	}
	return &reserve{path: path}
}

// release gives the space back; false if there was none left to give.
func (r *reserve) release() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.path == "" {
		return false
	}
	err := os.Remove(r.path)
	r.path = ""
	return err == nil
}
