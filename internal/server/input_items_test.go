package server_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/massgen/massgen/internal/llmsim/simtest"
	"github.com/massgen/massgen/internal/server"
	"github.com/massgen/massgen/internal/store"
)

// GET /v1/responses/{id}/input_items through the openai Go SDK: a
// response's own input items (not those of previous_response_id), newest
// first by default, in pages, and still after a restart.
func TestInputItemsAreListed(t *testing.T) {
	_, url := simtest.Start(t, "")
	configs := map[string]string{"team.yaml": "agent: {id: a, backend: {type: chatcompletion, model: m, base_url: " + url + "}}\n"}
	path := filepath.Join(t.TempDir(), store.FileName)
	f := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
	first, err := f.client.Responses.New(ctx10(t), askResponses("massgen/team", "My name is Ada."))
	if err != nil {
		t.Fatal(apiErr(err))
	}
	page, err := f.client.Responses.InputItems.List(ctx10(t), first.ID, responses.InputItemListParams{})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if got := describe(page.Data); got != "message:user:input_text:My name is Ada." || page.Data[0].ID == "" || page.HasMore {
		t.Fatalf("input items of a string input: %s", page.RawJSON())
	}

	answer := first.Output[len(first.Output)-1]
	p := responses.ResponseNewParams{Model: "massgen/team", PreviousResponseID: param.NewOpt(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfItemReference(answer.ID),
			responses.ResponseInputItemParamOfMessage("What is the weather in Paris?", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_1", "get_weather"),
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt("call_1"),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt("18°C, sunny")}}},
		}}}
	second, err := f.client.Responses.New(ctx10(t), p)
	if err != nil {
		t.Fatal(apiErr(err))
	}
	want := strings.Join([]string{
		"message:assistant:output_text:" + first.OutputText(),
		"message:user:input_text:What is the weather in Paris?",
		`function_call:call_1:get_weather:{"city":"Paris"}`,
		"function_call_output:call_1:18°C, sunny",
	}, "\n")
	asc, err := f.client.Responses.InputItems.List(ctx10(t), second.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if got := describe(asc.Data); got != want {
		t.Errorf("input items, ascending:\n%s\nwant\n%s", got, want)
	}
	if asc.Data[0].ID != answer.ID {
		t.Errorf("the referenced item is listed as %q, want its id %q", asc.Data[0].ID, answer.ID)
	}
	// Newest first, two at a time, then the rest after the last one seen;
	// the auto-pager walks the same pages.
	p1, err := f.client.Responses.InputItems.List(ctx10(t), second.ID, responses.InputItemListParams{Limit: param.NewOpt[int64](2)})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if !p1.HasMore || len(p1.Data) != 2 || p1.Data[0].Type != "function_call_output" {
		t.Errorf("first page: %s", p1.RawJSON())
	}
	p2, err := f.client.Responses.InputItems.List(ctx10(t), second.ID, responses.InputItemListParams{Limit: param.NewOpt[int64](2), After: param.NewOpt(p1.Data[1].ID)})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if p2.HasMore || describe(append(p2.Data, p1.Data...)) != describe([]responses.ResponseItemUnion{asc.Data[1], asc.Data[0], asc.Data[3], asc.Data[2]}) {
		t.Errorf("second page: %s", p2.RawJSON())
	}
	var walked []responses.ResponseItemUnion
	iter := f.client.Responses.InputItems.ListAutoPaging(ctx10(t), second.ID, responses.InputItemListParams{Limit: param.NewOpt[int64](1), Order: responses.InputItemListParamsOrderAsc})
	for iter.Next() {
		walked = append(walked, iter.Current())
	}
	if err := iter.Err(); err != nil || describe(walked) != want {
		t.Errorf("auto-paging: %v\n%s", err, describe(walked))
	}

	// After a restart, from the database.
	after := start(t, setup{configs: configs, deps: server.Deps{Responses: openDB(t, path)}})
	again, err := after.client.Responses.InputItems.List(ctx10(t), second.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if describe(again.Data) != want || again.Data[1].ID != asc.Data[1].ID {
		t.Errorf("after a restart:\n%s", describe(again.Data))
	}

	// An unknown response, a bad limit, an unknown cursor.
	if _, err := f.client.Responses.InputItems.List(ctx10(t), "resp_nope", responses.InputItemListParams{}); !is404(err) {
		t.Errorf("an unknown response: %v", apiErr(err))
	}
	if code, _ := statusCode(mustErr(f.client.Responses.InputItems.List(ctx10(t), second.ID, responses.InputItemListParams{Limit: param.NewOpt[int64](500)}))); code != 400 {
		t.Errorf("limit 500: status %d", code)
	}
	if _, err := f.client.Responses.InputItems.List(ctx10(t), second.ID, responses.InputItemListParams{After: param.NewOpt("msg_nope")}); !is404(err) {
		t.Errorf("an unknown cursor: %v", apiErr(err))
	}
}

// describe is the items as the SDK decoded them, one line each.
func describe(items []responses.ResponseItemUnion) string {
	var out []string
	for _, it := range items {
		var v struct {
			Type, Role, Name, Arguments, Output string
			CallID                              string `json:"call_id"`
			Content                             []struct{ Type, Text string }
		}
		if err := json.Unmarshal([]byte(it.RawJSON()), &v); err != nil {
			out = append(out, "undecodable: "+it.RawJSON())
			continue
		}
		s := v.Type
		switch v.Type {
		case "message":
			for _, c := range v.Content {
				s += ":" + v.Role + ":" + c.Type + ":" + c.Text
			}
		case "function_call":
			s += ":" + v.CallID + ":" + v.Name + ":" + v.Arguments
		case "function_call_output":
			s += ":" + v.CallID + ":" + v.Output
		}
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

func mustErr[T any](_ T, err error) error { return err }
