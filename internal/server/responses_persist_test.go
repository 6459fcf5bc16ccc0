package server_test

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/store"
)

// Responses kept in the sessions database outlive the server: a second
// server on the same database (a restart) resolves them.

// openDB opens the database at path, closed when the test ends (after the
// servers started later, whose cleanups run first).
func openDB(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func statusCode(err error) (int, string) {
	if e, ok := errors.AsType[*openai.Error](err); ok {
		return e.StatusCode, e.Code
	}
	return 0, ""
}

func TestKeptResponsesSurviveARestart(t *testing.T) {
	sim, url := simtest.Start(t, "")
	configs := map[string]string{"team.yaml": "agent: {id: a, backend: {type: chatcompletion, model: m, base_url: " + url + "}}\n"}
	path := filepath.Join(t.TempDir(), store.FileName)
	before := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
	first, err := before.client.Responses.New(ctx10(t), askResponses("massgen/team", "My name is Ada."))
	if err != nil {
		t.Fatal(apiErr(err))
	}
	p := askResponses("massgen/team", "Forget this.")
	p.Store = param.NewOpt(false)
	unkept, err := before.client.Responses.New(ctx10(t), p)
	if err != nil {
		t.Fatal(apiErr(err))
	}

	// The restarted server: its memory is empty, the database is not.
	after := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
	got, err := after.client.Responses.Get(ctx10(t), first.ID, responses.ResponseGetParams{})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if got.ID != first.ID || got.OutputText() != first.OutputText() || got.Status != "completed" || len(got.Output) != len(first.Output) {
		t.Errorf("GET after a restart = %s\nwant %s", got.RawJSON(), first.RawJSON())
	}

	n := len(sim.Requests())
	p = askResponses("massgen/team", "What is my name?")
	p.PreviousResponseID = param.NewOpt(first.ID)
	if _, err := after.client.Responses.New(ctx10(t), p); err != nil {
		t.Fatal(apiErr(err))
	}
	all := seen(sim, n)
	for _, want := range []string{"My name is Ada.", first.OutputText(), "What is my name?"} {
		if !strings.Contains(all, want) {
			t.Errorf("the run after the restart never saw %q:\n%s", want, all)
		}
	}

	// item_reference to the first response's answer, on a third server
	// (nothing in memory there either).
	third := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
	msg := first.Output[len(first.Output)-1]
	p = askResponses("massgen/team", "")
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfItemReference(msg.ID),
		responses.ResponseInputItemParamOfMessage("Say it again.", responses.EasyInputMessageRoleUser)}}
	n = len(sim.Requests())
	if _, err := third.client.Responses.New(ctx10(t), p); err != nil {
		t.Fatal(apiErr(err))
	}
	if all := seen(sim, n); !strings.Contains(all, first.OutputText()) {
		t.Errorf("item_reference %s after a restart did not bring the answer:\n%s", msg.ID, all)
	}

	// store: false is kept nowhere: not in the database either.
	if _, err := after.client.Responses.Get(ctx10(t), unkept.ID, responses.ResponseGetParams{}); !is404(err) {
		t.Errorf("GET of a store: false response after a restart: %v", apiErr(err))
	}
	db := openDB(t, path)
	if _, err := db.GetResponse(t.Context(), unkept.ID); !errors.Is(err, store.ErrNoResponse) {
		t.Errorf("a store: false response is in the database: %v", err)
	}
	if _, err := db.GetResponseItem(t.Context(), unkept.Output[len(unkept.Output)-1].ID); !errors.Is(err, store.ErrNoResponse) {
		t.Errorf("an item of a store: false response is in the database: %v", err)
	}
}

func is404(err error) bool {
	code, _ := statusCode(err)
	return code == http.StatusNotFound
}

func TestGetAndDeleteAResponse(t *testing.T) {
	for _, persist := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "database"}[persist], func(t *testing.T) {
			var d server.Deps
			var db *store.Store
			if persist {
				db = openDB(t, filepath.Join(t.TempDir(), store.FileName))
				d.Responses = db
			}
			f := start(t, setup{deps: d})
			p := askResponses("massgen", "What is the capital of France?")
			p.Metadata = map[string]string{"k": "v"}
			made, err := f.client.Responses.New(ctx10(t), p)
			if err != nil {
				t.Fatal(apiErr(err))
			}
			got, err := f.client.Responses.Get(ctx10(t), made.ID, responses.ResponseGetParams{})
			if err != nil {
				t.Fatal(apiErr(err))
			}
			if got.RawJSON() != made.RawJSON() {
				t.Errorf("GET = %s\nwant the Response as it was sent: %s", got.RawJSON(), made.RawJSON())
			}
			if err := f.client.Responses.Delete(ctx10(t), made.ID); err != nil {
				t.Fatal(apiErr(err))
			}
			if _, err := f.client.Responses.Get(ctx10(t), made.ID, responses.ResponseGetParams{}); !is404(err) {
				t.Errorf("GET after DELETE: %v", apiErr(err))
			}
			if code, c := statusCode(f.client.Responses.Delete(ctx10(t), made.ID)); code != http.StatusNotFound || c != "response_not_found" {
				t.Errorf("second DELETE: %d %s", code, c)
			}
			p = askResponses("massgen", "q")
			p.PreviousResponseID = param.NewOpt(made.ID)
			if code, _ := statusCode(func() error { _, err := f.client.Responses.New(ctx10(t), p); return err }()); code != http.StatusBadRequest {
				t.Errorf("previous_response_id of a deleted response: %d", code)
			}
			if db != nil {
				if n, err := db.CountResponses(t.Context()); err != nil || n != 0 {
					t.Errorf("%d responses left in the database (%v)", n, err)
				}
			}
		})
	}
}

func TestTheDatabaseIsPrunedToItsBound(t *testing.T) {
	_, url := simtest.Start(t, "")
	configs := map[string]string{"team.yaml": "agent: {id: a, backend: {type: chatcompletion, model: m, base_url: " + url + "}}\n"}
	db := openDB(t, filepath.Join(t.TempDir(), store.FileName))
	f := start(t, setup{configs: configs, deps: server.Deps{Responses: db, StoredResponses: 2}})
	var ids []string
	for _, q := range []string{"one", "two", "three"} {
		r, err := f.client.Responses.New(ctx10(t), askResponses("massgen/team", q))
		if err != nil {
			t.Fatal(apiErr(err))
		}
		ids = append(ids, r.ID)
	}
	if n, err := db.CountResponses(t.Context()); err != nil || n != 2 {
		t.Errorf("%d responses in the database (%v), want 2", n, err)
	}
	if _, err := db.GetResponse(t.Context(), ids[0]); !errors.Is(err, store.ErrNoResponse) {
		t.Errorf("the oldest response is still in the database: %v", err)
	}
	for _, id := range ids[1:] {
		if _, err := db.GetResponse(t.Context(), id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}
