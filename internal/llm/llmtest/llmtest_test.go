package llmtest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/massgen/massgen/internal/llm"
)

func TestRecordingsSkipsWhenTheFolderIsAbsent(t *testing.T) {
	root := t.TempDir()
	var skipped bool
	t.Run("absent", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		recordingsIn(t, root, "TestNothing/*/*.yaml")
		t.Error("recordingsIn returned for a missing folder")
	})
	if !skipped {
		t.Error("a missing recordings folder did not skip the test")
	}
}

func TestRecordingsAndLoadCassette(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "TestX", "model")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const yamlText = `interactions:
  - request:
      body: '{"model":"m"}'
      url: https://example.test/v1/messages
    response:
      body: hello
      headers:
        Content-Type: [text/event-stream]
      code: 200
`
	if err := os.WriteFile(filepath.Join(dir, "simple.yaml"), []byte(yamlText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "TestX", "direct.yaml"), []byte(yamlText), 0o644); err != nil {
		t.Fatal(err)
	}
	files := recordingsIn(t, root, "TestX/*/*.yaml", "TestX/*.yaml")
	want := []string{filepath.Join(dir, "simple.yaml"), filepath.Join(root, "TestX", "direct.yaml")}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	c := LoadCassette(t, files[0])
	if len(c.Interactions) != 1 {
		t.Fatalf("got %d interactions, want 1", len(c.Interactions))
	}
	it := c.Interactions[0]
	if it.Request.URL != "https://example.test/v1/messages" || it.Request.Body != `{"model":"m"}` ||
		it.Response.Code != 200 || it.Response.Body != "hello" ||
		!cmp.Equal(it.Response.Headers, map[string][]string{"Content-Type": {"text/event-stream"}}) {
		t.Errorf("cassette = %+v", it)
	}
}

func TestCollectStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	seq := func(yield func(llm.Chunk, error) bool) {
		_ = yield(llm.Chunk{Kind: llm.ChunkText, Text: "a"}, nil) &&
			yield(llm.Chunk{}, boom) &&
			yield(llm.Chunk{Kind: llm.ChunkText, Text: "b"}, nil)
	}
	got, err := Collect(seq)
	if !errors.Is(err, boom) {
		t.Errorf("error = %v, want boom", err)
	}
	if diff := cmp.Diff([]llm.Chunk{{Kind: llm.ChunkText, Text: "a"}}, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
}
