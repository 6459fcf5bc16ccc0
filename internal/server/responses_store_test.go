package server

import (
	"encoding/json"
	"fmt"
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
