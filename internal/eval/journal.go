package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// journalKind marks a journal's first line.
const journalKind = "massgen-eval-journal"

// Journal is the append-only record of an evaluation: its Spec on the
// first line, then one finished Run per line, each written and synced
// before the next run is counted done, so that a killed evaluation loses
// at most the runs in flight. A torn last line (a kill mid-write) is
// ignored on reading.
type Journal struct {
	mu sync.Mutex
	f  *os.File
}

type journalHead struct {
	Journal string `json:"journal"`
	Version int    `json:"version"`
	Spec    Spec   `json:"spec"`
}

// CreateJournal starts a journal at path; it must not exist.
func CreateJournal(path string, spec Spec) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	j := &Journal{f: f}
	if err := j.append(journalHead{Journal: journalKind, Version: SchemaVersion, Spec: spec}); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// OpenJournal reads a journal to resume it: its spec and the runs it holds,
// and the journal open for appending.
func OpenJournal(path string) (*Journal, Spec, []Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Spec{}, nil, err
	}
	spec, runs, good, err := parseJournal(path, data)
	if err != nil {
		return nil, Spec{}, nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, Spec{}, nil, err
	}
	// Cut a torn last line away, so the next run starts a line of its own.
	if err := f.Truncate(int64(good)); err != nil {
		f.Close()
		return nil, Spec{}, nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, Spec{}, nil, err
	}
	return &Journal{f: f}, spec, runs, nil
}

// ReadJournal reads a journal without opening it for writing.
func ReadJournal(path string) (Spec, []Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, nil, err
	}
	spec, runs, _, err := parseJournal(path, data)
	return spec, runs, err
}

// parseJournal returns the spec, the runs and the length of the whole
// lines read.
func parseJournal(path string, data []byte) (Spec, []Run, int, error) {
	var head journalHead
	var runs []Run
	good := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		end := good + len(b) + 1
		if end > len(data) { // the last line has no newline: torn
			break
		}
		if line == 1 {
			if err := json.Unmarshal(b, &head); err != nil || head.Journal != journalKind {
				return Spec{}, nil, 0, fmt.Errorf("%s is not a massgen eval journal", path)
			}
			if head.Version > SchemaVersion {
				return Spec{}, nil, 0, fmt.Errorf("%s is a journal of version %d; this massgen reads up to %d", path, head.Version, SchemaVersion)
			}
		} else {
			var r Run
			if err := json.Unmarshal(b, &r); err != nil {
				return Spec{}, nil, 0, fmt.Errorf("%s:%d: %v", path, line, err)
			}
			runs = append(runs, r)
		}
		good = end
	}
	if err := sc.Err(); err != nil {
		return Spec{}, nil, 0, fmt.Errorf("%s: %v", path, err)
	}
	if line == 0 {
		return Spec{}, nil, 0, fmt.Errorf("%s is empty", path)
	}
	return head.Spec, runs, good, nil
}

// Append writes one finished run durably.
func (j *Journal) Append(r Run) error { return j.append(r) }

func (j *Journal) append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return j.f.Sync()
}

// Close closes the journal file.
func (j *Journal) Close() error { return j.f.Close() }

// sameSpec says how a resumed journal's spec differs from this run's, if
// it does in a way that would mix results.
func sameSpec(old, now Spec) error {
	var diffs []string
	if old.DatasetSHA256 != now.DatasetSHA256 {
		diffs = append(diffs, "the dataset's content changed")
	}
	if old.Scorer != now.Scorer {
		diffs = append(diffs, fmt.Sprintf("scorer %s, now %s", old.Scorer, now.Scorer))
	}
	if old.Epochs != now.Epochs {
		diffs = append(diffs, fmt.Sprintf("epochs %d, now %d", old.Epochs, now.Epochs))
	}
	if old.EpochSeed != now.EpochSeed {
		diffs = append(diffs, "--epoch-seed differs")
	}
	if !slices.Equal(old.Systems, now.Systems) {
		diffs = append(diffs, "the systems differ (configs, --baselines or the teams' members)")
	}
	if len(diffs) > 0 {
		return errors.New("the journal is of another evaluation: " + joinComma(diffs))
	}
	return nil
}

func joinComma(xs []string) string {
	var b bytes.Buffer
	for i, x := range xs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x)
	}
	return b.String()
}
