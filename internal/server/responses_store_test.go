package server

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/massgen/massgen/internal/store"
)

func userItem(id, text string) convItem {
	b, _ := json.Marshal(text)
	return convItem{id: id, msgs: []chatMessage{{Role: "user", Content: b}}}
}

// The store forgets the least recently used response first, by count,
// and with it the items it owns.
func TestResponseStoreForgetsTheLeastRecentlyUsed(t *testing.T) {
	k := newResponseStore(2, 1<<20, nil, store.ResponseLimits{}, nil)
	k.put("r1", time.Time{}, []convItem{userItem("m1", "one")}, nil, nil)
	k.put("r2", time.Time{}, []convItem{userItem("m2", "two")}, nil, nil)
	if _, ok, _ := k.response(t.Context(), "r1"); !ok { // r1 is now the most recently used
		t.Fatal("r1 forgotten too early")
	}
	k.put("r3", time.Time{}, []convItem{userItem("m3", "three")}, nil, nil)
	if _, ok, _ := k.response(t.Context(), "r2"); ok {
		t.Error("r2, the least recently used, is still kept")
	}
	if _, ok, _ := k.item(t.Context(), "m2"); ok {
		t.Error("r2's item is still kept")
	}
	for _, id := range []string{"r1", "r3"} {
		if _, ok, _ := k.response(t.Context(), id); !ok {
			t.Errorf("%s forgotten", id)
		}
	}
	if k.len() != 2 {
		t.Errorf("%d kept, want 2", k.len())
	}
}

// An item referred to again belongs to the latest response that holds it:
// forgetting the older response keeps it.
func TestResponseStoreKeepsItemsOfTheLaterResponse(t *testing.T) {
	k := newResponseStore(1, 1<<20, nil, store.ResponseLimits{}, nil)
	k.put("r1", time.Time{}, []convItem{userItem("m1", "one")}, nil, nil)
	k.put("r2", time.Time{}, []convItem{userItem("m1", "one"), userItem("m2", "two")}, nil, nil) // r1 goes
	if _, ok, _ := k.item(t.Context(), "m1"); !ok {
		t.Error("m1, held by r2 too, was forgotten with r1")
	}
}

// The store stays within its bytes, keeping the latest response at least.
func TestResponseStoreIsBoundedByBytes(t *testing.T) {
	k := newResponseStore(1000, 10_000, nil, store.ResponseLimits{}, nil)
	big := strings.Repeat("x", 3_000)
	for i := range 10 {
		k.put(fmt.Sprintf("r%d", i), time.Time{}, []convItem{userItem(fmt.Sprintf("m%d", i), big)}, nil, nil)
	}
	if k.bytes > 10_000 || k.len() != 3 {
		t.Errorf("%d responses, %d bytes kept", k.len(), k.bytes)
	}
	if _, ok, _ := k.response(t.Context(), "r9"); !ok {
		t.Error("the latest response was forgotten")
	}
	k.put("huge", time.Time{}, []convItem{userItem("h", strings.Repeat("y", 50_000))}, nil, nil)
	if _, ok, _ := k.response(t.Context(), "huge"); !ok || k.len() != 1 {
		t.Errorf("a response over the limit alone: kept %v, %d responses", ok, k.len())
	}
}

// With a database, memory is a cache: a response it forgot is read back
// from the database, its items too, and delete reaches both.
func TestResponseStoreFallsBackToTheDatabase(t *testing.T) {
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k := newResponseStore(1, 1<<20, db, store.ResponseLimits{}, slog.New(slog.DiscardHandler))
	k.put("r1", time.Now(), []convItem{userItem("m1", "one")}, []convItem{userItem("o1", "answer")}, json.RawMessage(`{"id":"r1"}`))
	k.put("r2", time.Now(), []convItem{userItem("m2", "two")}, nil, json.RawMessage(`{"id":"r2"}`)) // r1 leaves memory
	if k.len() != 1 {
		t.Fatalf("%d in memory, want 1", k.len())
	}
	conv, ok, e := k.response(t.Context(), "r1")
	if e != nil || !ok || len(conv) != 2 || string(conv[0].Content) != `"one"` || string(conv[1].Content) != `"answer"` {
		t.Errorf("r1 from the database: %v %v %+v", ok, e, conv)
	}
	if msgs, ok, _ := k.item(t.Context(), "m2"); !ok || string(msgs[0].Content) != `"two"` {
		t.Errorf("m2: %v %+v", ok, msgs) // r2 left memory when r1 came back
	}
	if obj, ok, _ := k.object(t.Context(), "r2"); !ok || string(obj) != `{"id":"r2"}` {
		t.Errorf("r2's object: %v %s", ok, obj)
	}
	if found, e := k.remove(t.Context(), "r1"); !found || e != nil {
		t.Fatalf("remove r1: %v %v", found, e)
	}
	for _, id := range []string{"m1", "o1"} {
		if _, ok, _ := k.item(t.Context(), id); ok {
			t.Errorf("item %s of the removed r1 is still kept", id)
		}
	}
	if _, ok, _ := k.response(t.Context(), "r1"); ok {
		t.Error("r1 still kept after remove")
	}
	if n, _ := db.CountResponses(t.Context()); n != 1 {
		t.Errorf("%d responses in the database, want 1 (r2)", n)
	}
}
