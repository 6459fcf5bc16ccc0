package agent

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/llm"
)

// TestArgTextDecodesContentAsItStreams: new_answer's content comes out
// decoded, in order, whatever the fragment boundaries (escapes, \u
// sequences and surrogate pairs cut in the middle); other members, nested
// "content" keys and other tools give nothing.
func TestArgTextDecodesContentAsItStreams(t *testing.T) {
	args := `{"reason":"a \"content\": trap","meta":{"content":"nested"},"content":"Paris\n\"is\" caf\u00e9 \ud83d\ude00 a\\b","x":"after"}`
	want := "Paris\n\"is\" café 😀 a\\b"
	for size := 1; size <= len(args); size++ {
		var a argTexts
		var got strings.Builder
		for i := 0; i < len(args); i += size {
			frag := args[i:min(len(args), i+size)]
			tool, s := a.feed(llm.Chunk{Kind: llm.ChunkToolArgs, Text: frag, ToolCall: &llm.ToolCall{ID: "c1", Name: "new_answer"}})
			if s != "" && tool != "new_answer" {
				t.Fatalf("tool %q", tool)
			}
			got.WriteString(s)
		}
		if got.String() != want {
			t.Fatalf("fragments of %d: got %q, want %q", size, got.String(), want)
		}
	}
	var a argTexts
	if _, s := a.feed(llm.Chunk{Kind: llm.ChunkToolArgs, Text: `{"content":"x"}`, ToolCall: &llm.ToolCall{ID: "v", Name: "vote"}}); s != "" {
		t.Errorf("vote's arguments gave %q", s)
	}
}

// streamModel yields fixed chunks.
type streamModel []llm.Chunk

func (m streamModel) Stream(context.Context, *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		for _, c := range m {
			if !yield(c, nil) {
				return
			}
		}
	}
}

type toolTextRecorder struct{ text, answer []string }

func (r *toolTextRecorder) Text(s string)           { r.text = append(r.text, s) }
func (r *toolTextRecorder) Reasoning(string)        {}
func (r *toolTextRecorder) ToolText(tool, s string) { r.answer = append(r.answer, tool+":"+s) }

// TestCollectEmitsAnswerWhileItStreams: a turn whose answer streams as
// new_answer's arguments shows it piece by piece, before the call is whole,
// and the call itself is unchanged.
func TestCollectEmitsAnswerWhileItStreams(t *testing.T) {
	call := &llm.ToolCall{ID: "c1", Name: "new_answer"}
	m := streamModel{
		{Kind: llm.ChunkText, Text: "thinking"},
		{Kind: llm.ChunkToolArgs, Text: `{"content":"Par`, ToolCall: call},
		{Kind: llm.ChunkToolArgs, Text: `is"}`, ToolCall: call},
		{Kind: llm.ChunkToolCall, ToolCall: &llm.ToolCall{ID: "c1", Name: "new_answer", Arguments: `{"content":"Paris"}`}},
		{Kind: llm.ChunkDone, FinishReason: "tool_calls"},
	}
	rec := &toolTextRecorder{}
	r, err := collect(context.Background(), m, &llm.Request{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.answer, "|"); got != "new_answer:Par|new_answer:is" {
		t.Errorf("answer deltas %q", got)
	}
	if r.text != "thinking" || len(r.calls) != 1 || r.calls[0].Arguments != `{"content":"Paris"}` {
		t.Errorf("response %+v", r)
	}
}
