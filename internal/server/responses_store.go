package server

import (
	"cmp"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/store"
)

// responseStore keeps recent Responses, so that a client may continue one
// with previous_response_id or refer to its items with item_reference
// (the AI SDK's Responses model does so by default) instead of sending it
// all again, and read one back (GET /v1/responses/{id}). In memory, it is
// bounded by count and by size; the least recently used response goes
// first. With a database (Deps.Responses), every response is also written
// there before the client has it, so that a restarted server (or another
// one on the same database) resolves it: memory is then the cache in front
// of the database. A request with store: false is kept nowhere, as OpenAI
// does.
type responseStore struct {
	mu       sync.Mutex
	maxN     int
	maxBytes int64
	bytes    int64
	order    *list.List               // of *keptResponse, most recently used first
	byID     map[string]*list.Element // response id → its element
	items    map[string]keptItem      // item id → its messages

	db  *store.Store // nil: memory only
	lim store.ResponseLimits
	log *slog.Logger
}

// keptResponse is one response: the conversation its request resolved to
// (without instructions, which OpenAI does not carry over) followed by its
// output, and the Response object as it was sent.
type keptResponse struct {
	id     string
	conv   []chatMessage
	input  []convItem // the request's own input items, for GET …/input_items
	object json.RawMessage
	items  []string // ids of the items it owns
	size   int64
}

// keptItem is an input or output item, as the messages it stands for (a
// reasoning item stands for none). owner is the response that keeps it.
type keptItem struct {
	msgs  []chatMessage
	owner string
}

// convItem is one item of a conversation: its id (if the item had one)
// and its messages. It is also how the database holds conversations.
// prior marks the conversation of previous_response_id, which comes
// first but is no input item of the request; ref is the id an
// item_reference named (the item stays its first response's).
type convItem struct {
	id    string
	msgs  []chatMessage
	prior bool
	ref   string
}

// storedItem is a convItem in the database's JSON.
type storedItem struct {
	ID       string        `json:"id,omitempty"`
	Messages []chatMessage `json:"messages"`
	Prior    bool          `json:"prior,omitempty"`
	Ref      string        `json:"ref,omitempty"`
}

func newResponseStore(maxN int, maxBytes int64, db *store.Store, lim store.ResponseLimits, log *slog.Logger) *responseStore {
	return &responseStore{maxN: maxN, maxBytes: maxBytes, order: list.New(),
		byID: map[string]*list.Element{}, items: map[string]keptItem{}, db: db, lim: lim, log: log}
}

// dbTimeout bounds the write of a finished response, which the client
// waits for; SQLite's busy timeout bounds each statement anyway.
const dbTimeout = time.Minute

// put keeps response id: its input and output items, and its object.
// With a database, the response is written there before put returns, and
// a failed write is returned (as the client's error: it must not be told
// of a response that a restart would not find) with nothing kept, in
// memory either.
func (k *responseStore) put(id string, created time.Time, input, output []convItem, object json.RawMessage) *Error {
	conv := append(append([]convItem(nil), input...), output...)
	if k.db != nil {
		r := store.Response{ID: id, Created: created, Input: storedJSON(input), Output: storedJSON(output), Object: object}
		for _, it := range conv {
			if it.id != "" {
				b, _ := json.Marshal(it.msgs)
				r.Items = append(r.Items, store.ResponseItem{ID: it.id, Messages: b})
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), dbTimeout)
		defer cancel()
		if _, err := k.db.PutResponse(ctx, r, k.lim); err != nil {
			k.log.Error("cannot keep a response in the database: the request fails", "response", id, "db", k.db.Path(), "err", err)
			return errNotKept(k.db.Path(), err)
		}
	}
	k.cache(id, input, output, object)
	return nil
}

// errNotKept is the error of a request whose run finished but whose
// response (store: true) could not be written to the database: 507 when
// the disk (or the database) is full, else 500.
func errNotKept(db string, err error) *Error {
	status, why := http.StatusInternalServerError, "the sessions database failed"
	if store.IsFull(err) {
		status, why = http.StatusInsufficientStorage, "the disk of the sessions database is full"
	}
	return &Error{Status: status, Code: "response_not_stored", Err: err,
		Message: fmt.Sprintf("The run finished, but its response could not be kept (store: true) because %s (%s: %v), so it is not returned: "+
			"a later previous_response_id would not find it. Free space for %s, or send store: false to get answers that are not kept.", why, db, err, db)}
}

func storedJSON(items []convItem) json.RawMessage {
	out := make([]storedItem, 0, len(items))
	for _, it := range items {
		out = append(out, storedItem{ID: it.id, Messages: it.msgs, Prior: it.prior, Ref: it.ref})
	}
	b, _ := json.Marshal(out)
	return b
}

// cache keeps a response in memory, pruning the least recently used,
// and returns it.
func (k *responseStore) cache(id string, input, output []convItem, object json.RawMessage) *keptResponse {
	conv := append(append([]convItem(nil), input...), output...)
	r := &keptResponse{id: id, object: object, input: input}
	for _, it := range conv {
		r.conv = append(r.conv, it.msgs...)
	}
	b, _ := json.Marshal(r.conv)
	r.size = int64(len(b)+len(object)) + int64(64*len(conv))
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
	return r
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

// errStoreRead is a database failure while reading a kept response: the
// request gets 500, not "not found", which would be untrue.
func errStoreRead(err error) *Error {
	return NewError(500, "response_store_error", "Cannot read the kept responses: %v", err)
}

// lookup returns response id, from memory or else the database (which
// then caches it), and marks it used.
func (k *responseStore) lookup(ctx context.Context, id string) (*keptResponse, *Error) {
	k.mu.Lock()
	if e, ok := k.byID[id]; ok {
		k.order.MoveToFront(e)
		r := e.Value.(*keptResponse)
		k.mu.Unlock()
		return r, nil
	}
	k.mu.Unlock()
	if k.db == nil {
		return nil, nil
	}
	sr, err := k.db.GetResponse(ctx, id)
	if errors.Is(err, store.ErrNoResponse) {
		return nil, nil
	}
	if err != nil {
		return nil, errStoreRead(err)
	}
	var in, out []storedItem
	if err := errors.Join(json.Unmarshal(sr.Input, &in), json.Unmarshal(sr.Output, &out)); err != nil {
		return nil, errStoreRead(fmt.Errorf("response %s: %w", id, err))
	}
	items := func(st []storedItem) []convItem {
		out := make([]convItem, 0, len(st))
		for _, it := range st {
			out = append(out, convItem{id: it.ID, msgs: it.Messages, prior: it.Prior, ref: it.Ref})
		}
		return out
	}
	return k.cache(id, items(in), items(out), sr.Object), nil
}

// inputItems returns the input items of response id as the Responses API
// lists them (false: not kept).
func (k *responseStore) inputItems(ctx context.Context, id string) ([]json.RawMessage, bool, *Error) {
	r, e := k.lookup(ctx, id)
	if r == nil {
		return nil, false, e
	}
	var out []json.RawMessage
	n := 0
	for _, it := range r.input {
		if it.prior {
			continue
		}
		for _, m := range it.msgs {
			itemID := cmp.Or(it.id, it.ref)
			if itemID == "" || len(it.msgs) > 1 {
				// Items the client sent without an id get a stable one.
				itemID = fmt.Sprintf("msg_%s_%d", strings.TrimPrefix(id, "resp_"), n)
			}
			n++
			out = append(out, listedItems(itemID, m)...)
		}
	}
	return out, true, nil
}

// response returns the conversation of response id (false: not kept).
func (k *responseStore) response(ctx context.Context, id string) ([]chatMessage, bool, *Error) {
	r, e := k.lookup(ctx, id)
	if r == nil {
		return nil, false, e
	}
	return r.conv, true, nil
}

// object returns the Response object of response id (false: not kept).
func (k *responseStore) object(ctx context.Context, id string) (json.RawMessage, bool, *Error) {
	r, e := k.lookup(ctx, id)
	if r == nil {
		return nil, false, e
	}
	return r.object, true, nil
}

// item returns the messages of item id, from memory or else the database.
func (k *responseStore) item(ctx context.Context, id string) ([]chatMessage, bool, *Error) {
	k.mu.Lock()
	it, ok := k.items[id]
	if ok {
		if e := k.byID[it.owner]; e != nil {
			k.order.MoveToFront(e)
		}
	}
	k.mu.Unlock()
	if ok || k.db == nil {
		return it.msgs, ok, nil
	}
	b, err := k.db.GetResponseItem(ctx, id)
	if errors.Is(err, store.ErrNoResponse) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, errStoreRead(err)
	}
	var msgs []chatMessage
	if err := json.Unmarshal(b, &msgs); err != nil {
		return nil, false, errStoreRead(fmt.Errorf("item %s: %w", id, err))
	}
	return msgs, true, nil
}

// remove forgets response id, in memory and in the database; false: it
// was kept in neither.
func (k *responseStore) remove(ctx context.Context, id string) (bool, *Error) {
	k.mu.Lock()
	e, found := k.byID[id]
	if found {
		k.removeLocked(e)
	}
	k.mu.Unlock()
	if k.db == nil {
		return found, nil
	}
	err := k.db.DeleteResponse(ctx, id)
	if errors.Is(err, store.ErrNoResponse) {
		return found, nil
	}
	if err != nil {
		return found, NewError(500, "response_store_error", "Cannot delete the response from the kept responses: %v", err)
	}
	return true, nil
}

func (k *responseStore) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.order.Len()
}
