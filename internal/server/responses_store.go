package server

import (
	"container/list"
	"encoding/json"
	"sync"
)

// responseStore keeps the conversations of recent Responses, in memory, so
// that a client may continue one with previous_response_id or refer to
// its items with item_reference (the AI SDK's Responses model does so by
// default) instead of sending it all again. It is bounded by count and by
// size; the least recently used response goes first. A request with
// store: false is not kept, as OpenAI does.
type responseStore struct {
	mu       sync.Mutex
	maxN     int
	maxBytes int64
	bytes    int64
	order    *list.List               // of *keptResponse, most recently used first
	byID     map[string]*list.Element // response id → its element
	items    map[string]keptItem      // item id → its messages
}

// keptResponse is one response's conversation: what its request resolved
// to (without instructions, which OpenAI does not carry over) and its
// output.
type keptResponse struct {
	id    string
	conv  []chatMessage
	items []string // ids of the items it owns
	size  int64
}

// keptItem is an input or output item, as the messages it stands for (a
// reasoning item stands for none). owner is the response that keeps it.
type keptItem struct {
	msgs  []chatMessage
	owner string
}

// convItem is one item of a conversation: its id (if the item had one)
// and its messages.
type convItem struct {
	id   string
	msgs []chatMessage
}

func newResponseStore(maxN int, maxBytes int64) *responseStore {
	return &responseStore{maxN: maxN, maxBytes: maxBytes, order: list.New(),
		byID: map[string]*list.Element{}, items: map[string]keptItem{}}
}

// put keeps response id's conversation.
func (k *responseStore) put(id string, conv []convItem) {
	r := &keptResponse{id: id}
	for _, it := range conv {
		r.conv = append(r.conv, it.msgs...)
	}
	b, _ := json.Marshal(r.conv)
	r.size = int64(len(b)) + int64(64*len(conv))
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.byID[id]; ok {
		k.removeLocked(e)
	}
	for _, it := range conv {
		if it.id != "" {
			k.items[it.id] = keptItem{msgs: it.msgs, owner: id}
			r.items = append(r.items, it.id)
		}
	}
	k.byID[id] = k.order.PushFront(r)
	k.bytes += r.size
	for k.order.Len() > 1 && (k.order.Len() > k.maxN || k.bytes > k.maxBytes) {
		k.removeLocked(k.order.Back())
	}
}

func (k *responseStore) removeLocked(e *list.Element) {
	r := k.order.Remove(e).(*keptResponse)
	delete(k.byID, r.id)
	k.bytes -= r.size
	for _, id := range r.items {
		if k.items[id].owner == r.id {
			delete(k.items, id)
		}
	}
}

// response returns the conversation of response id, and marks it used.
func (k *responseStore) response(id string) ([]chatMessage, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.byID[id]
	if !ok {
		return nil, false
	}
	k.order.MoveToFront(e)
	return e.Value.(*keptResponse).conv, true
}

// item returns the messages of item id.
func (k *responseStore) item(id string) ([]chatMessage, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	it, ok := k.items[id]
	if ok {
		if e := k.byID[it.owner]; e != nil {
			k.order.MoveToFront(e)
		}
	}
	return it.msgs, ok
}

func (k *responseStore) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.order.Len()
}
