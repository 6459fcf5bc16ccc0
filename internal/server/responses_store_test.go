package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func userItem(id, text string) convItem {
	b, _ := json.Marshal(text)
	return convItem{id: id, msgs: []chatMessage{{Role: "user", Content: b}}}
}

// The store forgets the least recently used response first, by count,
// and with it the items it owns.
func TestResponseStoreForgetsTheLeastRecentlyUsed(t *testing.T) {
	k := newResponseStore(2, 1<<20)
	k.put("r1", []convItem{userItem("m1", "one")})
	k.put("r2", []convItem{userItem("m2", "two")})
	if _, ok := k.response("r1"); !ok { // r1 is now the most recently used
		t.Fatal("r1 forgotten too early")
	}
	k.put("r3", []convItem{userItem("m3", "three")})
	if _, ok := k.response("r2"); ok {
		t.Error("r2, the least recently used, is still kept")
	}
	if _, ok := k.item("m2"); ok {
		t.Error("r2's item is still kept")
	}
	for _, id := range []string{"r1", "r3"} {
		if _, ok := k.response(id); !ok {
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
	k := newResponseStore(1, 1<<20)
	k.put("r1", []convItem{userItem("m1", "one")})
	k.put("r2", []convItem{userItem("m1", "one"), userItem("m2", "two")}) // r1 goes
	if _, ok := k.item("m1"); !ok {
		t.Error("m1, held by r2 too, was forgotten with r1")
	}
}

// The store stays within its bytes, keeping the latest response at least.
func TestResponseStoreIsBoundedByBytes(t *testing.T) {
	k := newResponseStore(1000, 10_000)
	big := strings.Repeat("x", 3_000)
	for i := range 10 {
		k.put(fmt.Sprintf("r%d", i), []convItem{userItem(fmt.Sprintf("m%d", i), big)})
	}
	if k.bytes > 10_000 || k.len() != 3 {
		t.Errorf("%d responses, %d bytes kept", k.len(), k.bytes)
	}
	if _, ok := k.response("r9"); !ok {
		t.Error("the latest response was forgotten")
	}
	k.put("huge", []convItem{userItem("h", strings.Repeat("y", 50_000))})
	if _, ok := k.response("huge"); !ok || k.len() != 1 {
		t.Errorf("a response over the limit alone: kept %v, %d responses", ok, k.len())
	}
}
