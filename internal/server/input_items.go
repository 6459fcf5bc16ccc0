package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

// GET /v1/responses/{id}/input_items lists a kept response's input items,
// as OpenAI does (the openai SDKs' responses.input_items.list): each item
// as the Responses API writes it, newest first unless order=asc, limit
// (1–100, default 20) at a time after the item id `after`. The items are
// rebuilt from the conversation massgen keeps; one the client sent without
// an id gets a stable one (msg_<response>_<n>).

// handleInputItems serves GET /v1/responses/{id}/input_items.
func (s *Server) handleInputItems(w http.ResponseWriter, r *http.Request) {
	if !methods(w, r, http.MethodGet) {
		return
	}
	id := r.PathValue("id")
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, badRequest("limit", "invalid_value", "'limit' must be a whole number from 1 to 100, got %q.", v))
			return
		}
		limit = n
	}
	order := q.Get("order")
	switch order {
	case "":
		order = "desc"
	case "asc", "desc":
	default:
		writeError(w, badRequest("order", "invalid_value", "'order' must be 'asc' or 'desc', got %q.", order))
		return
	}
	items, ok, e := s.kept.inputItems(r.Context(), id)
	switch {
	case e != nil:
		writeError(w, e)
		return
	case !ok:
		writeError(w, &Error{Status: http.StatusNotFound, Param: "response_id", Code: "response_not_found",
			Message: fmt.Sprintf("Response with id '%s' not found (massgen keeps the latest responses made with store: true: %s).", id, s.keptWhere())})
		return
	}
	if order == "desc" {
		slices.Reverse(items)
	}
	if after := q.Get("after"); after != "" {
		i := slices.IndexFunc(items, func(it json.RawMessage) bool { return itemID(it) == after })
		if i < 0 {
			writeError(w, &Error{Status: http.StatusNotFound, Param: "after", Code: "item_not_found",
				Message: fmt.Sprintf("Item with id '%s' is not an input item of response '%s'.", after, id)})
			return
		}
		items = items[i+1:]
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	list := map[string]any{"object": "list", "data": items, "has_more": more, "first_id": nil, "last_id": nil}
	if len(items) > 0 {
		list["first_id"], list["last_id"] = itemID(items[0]), itemID(items[len(items)-1])
	} else {
		list["data"] = []json.RawMessage{} // [], not null
	}
	writeJSON(w, http.StatusOK, list)
}

func itemID(item json.RawMessage) string {
	var it struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(item, &it)
	return it.ID
}

// listedItems is one kept message as the Responses API's items: a message
// (input_text parts, or output_text for the assistant's), a function_call
// per tool call, or a function_call_output.
func listedItems(id string, m chatMessage) []json.RawMessage {
	enc := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	var out []json.RawMessage
	switch {
	case m.Role == "tool":
		text, _ := contentText(m.Content)
		out = append(out, enc(map[string]any{"type": "function_call_output", "id": id, "call_id": m.ToolCallID,
			"output": text, "status": "completed"}))
	case len(m.ToolCalls) > 0:
		for i, c := range m.ToolCalls {
			cid := id
			if i > 0 {
				cid = fmt.Sprintf("%s_%d", id, i)
			}
			out = append(out, enc(map[string]any{"type": "function_call", "id": cid, "call_id": c.ID,
				"name": c.Function.Name, "arguments": c.Function.Arguments, "status": "completed"}))
		}
	default:
		out = append(out, enc(map[string]any{"type": "message", "id": id, "role": m.Role, "status": "completed",
			"content": listedContent(m)}))
	}
	return out
}

// listedContent is a message's content as parts: a string becomes one
// input_text part (output_text for the assistant); parts stay as sent.
func listedContent(m chatMessage) any {
	var parts []json.RawMessage
	if json.Unmarshal(m.Content, &parts) == nil {
		return parts
	}
	text, _ := contentText(m.Content)
	if m.Role == "assistant" {
		return []map[string]any{{"type": "output_text", "text": text, "annotations": []any{}}}
	}
	return []map[string]any{{"type": "input_text", "text": text}}
}
