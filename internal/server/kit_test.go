package server

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/event"
)

// A Responses request that continues a kept response (previous_response_id)
// tells the Runner that response's log directory, whence filesystem memory
// carries the winner's memories into the next turn; a new conversation
// tells it none.
func TestPreviousResponseGivesItsLogDirToTheRunner(t *testing.T) {
	hs, seen := fake(t, []event.Record{{Type: event.TypeRunStarted, Agents: []string{"a"}}},
		&RunResult{Status: "completed", Final: "Paris.", Winner: "a", LogDir: "/logs/log_1"}, nil)
	body := postResponses(t, hs.URL, `{"model":"massgen","input":"Capital of France?"}`)
	var first struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &first); err != nil || first.ID == "" {
		t.Fatalf("first response: %s (%v)", body, err)
	}
	postResponses(t, hs.URL, `{"model":"massgen","input":"And of Italy?","previous_response_id":"`+first.ID+`"}`)
	rs := seen()
	if len(rs) != 2 || rs[0].PreviousLogDir != "" || rs[1].PreviousLogDir != "/logs/log_1" {
		var got []string
		for _, r := range rs {
			got = append(got, r.PreviousLogDir)
		}
		t.Errorf("PreviousLogDir of the runs: %q, want \"\" then /logs/log_1", got)
	}
}

func postResponses(t *testing.T, url, body string) []byte {
	t.Helper()
	resp, err := hc.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return b
}
