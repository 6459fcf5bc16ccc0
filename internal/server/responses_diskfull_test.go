package server_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/diskfull"
	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/store"
)

// keepOutcome is what the client was told of one request with store: true.
type keepOutcome struct {
	id     string // the response id, when the client got the response
	status int    // else the error's HTTP status (0 for a stream)
	code   string // and its code
}

// askKeeping sends one Responses request (store: true, the default),
// streamed or not, and returns what the client was told.
func askKeeping(t *testing.T, f *fixture, question string, stream bool) keepOutcome {
	t.Helper()
	p := askResponses("massgen/team", question)
	if !stream {
		r, err := f.client.Responses.New(ctx10(t), p)
		if err != nil {
			status, code := statusCode(err)
			if status == 0 {
				t.Fatalf("%s: %v", question, err)
			}
			return keepOutcome{status: status, code: code}
		}
		return keepOutcome{id: r.ID}
	}
	st := f.client.Responses.NewStreaming(ctx10(t), p)
	defer st.Close()
	var out keepOutcome
	for st.Next() {
		switch ev := st.Current(); ev.Type {
		case "response.completed":
			out.id = ev.Response.ID
		case "response.failed":
			out.code = string(ev.Response.Error.Code)
		}
	}
	if out.id != "" && out.code != "" {
		t.Errorf("%s: the stream both completed and failed", question)
	}
	if out.id == "" && out.code == "" {
		t.Fatalf("%s: the stream neither completed nor failed: %v", question, st.Err())
	}
	return out
}

// A server whose database cannot keep a response (store: true) fails the
// request, with an OpenAI error that says why, instead of answering 200
// for a response a restart would not find: every response a client got
// is found by a restarted server.
func TestAResponseTheDatabaseCannotKeepIsAnErrorNotA200(t *testing.T) {
	_, url := simtest.Start(t, "")
	configs := map[string]string{"team.yaml": "agent: {id: a, backend: {type: chatcompletion, model: m, base_url: " + url + "}}\n"}

	// check sends requests until some fail as want says, and checks that a
	// restarted server (a second Store on the database) finds every
	// response that was answered.
	check := func(t *testing.T, path string, f *fixture, wantStatus int, wantFailures func(i int) bool) {
		var kept []string
		failures := 0
		for i := 0; i < 40 && failures < 4; i++ {
			out := askKeeping(t, f, fmt.Sprintf("Question %d", i), i%2 == 1)
			if out.id != "" {
				kept = append(kept, out.id)
				continue
			}
			failures++
			if out.code != "response_not_stored" || (out.status != 0 && out.status != wantStatus) {
				t.Errorf("question %d failed with %d %q, want %d response_not_stored", i, out.status, out.code, wantStatus)
			}
		}
		if !wantFailures(failures) {
			t.Fatalf("%d requests failed (kept %d)", failures, len(kept))
		}
		restarted := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
		for _, id := range kept {
			if _, err := restarted.client.Responses.Get(ctx10(t), id, responses.ResponseGetParams{}); err != nil {
				t.Errorf("response %s, answered with 200, is not found after a restart: %v", id, apiErr(err))
			}
		}
		t.Logf("%d responses kept, %d requests failed", len(kept), failures)
	}

	// A real full disk: the database on a small tmpfs, filled up.
	t.Run("tmpfs", func(t *testing.T) {
		dir := diskfull.Mount(t, 1<<20)
		if dir == "" {
			return // run in a user namespace, where the tmpfs could be mounted
		}
		path := filepath.Join(dir, store.FileName)
		f := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
		if out := askKeeping(t, f, "Before the disk fills", false); out.id == "" {
			t.Fatalf("with room on the disk: %+v", out)
		}
		free := diskfull.Fill(t, dir, 48<<10)
		check(t, path, f, http.StatusInsufficientStorage, func(n int) bool { return n >= 4 })
		// Space freed, the server keeps responses again.
		free()
		if out := askKeeping(t, f, "After the disk was freed", false); out.id == "" {
			t.Errorf("after freeing the disk: %+v", out)
		}
	})

	// Without the right to mount: a real SQLite whose writes to the table
	// fail (a trigger aborts them), which the server must not hide either.
	t.Run("injected", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), store.FileName)
		f := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
		if out := askKeeping(t, f, "Before the writes fail", false); out.id == "" {
			t.Fatalf("before the writes fail: %+v", out)
		}
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TRIGGER fail_every_put BEFORE INSERT ON responses
			BEGIN SELECT RAISE(ABORT, 'injected write failure'); END`); err != nil {
			t.Fatal(err)
		}
		check(t, path, f, http.StatusInternalServerError, func(n int) bool { return n == 4 })
	})
}
