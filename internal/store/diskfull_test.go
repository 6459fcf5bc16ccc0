package store

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/diskfull"
)

// response is a kept response of about size bytes.
func bigResponse(i, size int) Response {
	text, _ := json.Marshal(strings.Repeat(fmt.Sprintf("answer %d ", i), size/10))
	return Response{ID: fmt.Sprintf("resp_%d", i), Created: t0.Add(time.Duration(i) * time.Second),
		Input: json.RawMessage(`[]`), Output: json.RawMessage(`[` + string(text) + `]`), Object: json.RawMessage(`{}`),
		Items: []ResponseItem{{ID: fmt.Sprintf("msg_%d", i), Messages: text}}}
}

// On a disk that fills up, PutResponse fails, and says so, for every
// response it does not keep; every response it kept is there after a
// restart (another Store on the same file).
func TestPutResponseOnAFullDiskFailsForWhatItDoesNotKeep(t *testing.T) {
	dir := diskfull.Mount(t, 512<<10)
	if dir == "" {
		return // run in a user namespace, where the tmpfs could be mounted
	}
	path := filepath.Join(dir, FileName)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	var failed error
	for i := 0; i < 200 && failed == nil; i++ {
		r := bigResponse(i, 8<<10)
		if _, err := s.PutResponse(t.Context(), r, ResponseLimits{}); err != nil {
			failed = err
			break
		}
		kept = append(kept, r.ID)
	}
	t.Logf("kept %d, then: %v", len(kept), failed)
	if failed == nil {
		t.Fatal("200 responses of 8 KiB fitted in 512 KiB: the disk never filled")
	}
	if !IsFull(failed) {
		t.Errorf("the error %v is not recognised as a full disk", failed)
	}
	s.Close()
	again := open(t, path)
	for _, id := range kept {
		if _, err := again.GetResponse(t.Context(), id); err != nil {
			t.Errorf("response %s, kept without error, is gone after a restart: %v", id, err)
		}
	}
}
