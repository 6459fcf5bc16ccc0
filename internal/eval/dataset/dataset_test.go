package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseJSONL(t *testing.T) {
	items, err := Parse("d.jsonl", []byte(`# a comment

{"id": "a", "question": "Q1?", "target": "T"}
{"input": "Q2?", "answer": 42}
{"id": 7, "question": "Q3?", "target": ["x", 1.5], "metadata": {"k": "v"}}
{"question": "Pick", "choices": ["red", "green"], "target": "green"}
`), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{ID: "a", Question: "Q1?", Target: []string{"T"}},
		{ID: "2", Question: "Q2?", Target: []string{"42"}},
		{ID: "7", Question: "Q3?", Target: []string{"x", "1.5"}, Metadata: map[string]any{"k": "v"}},
		{ID: "4", Question: "Pick", Choices: []string{"red", "green"}, Target: []string{"B"}},
	}
	if !reflect.DeepEqual(items, want) {
		t.Errorf("got %+v\nwant %+v", items, want)
	}
	if p := items[3].Prompt(); !strings.Contains(p, "A) red\nB) green\n") || !strings.HasSuffix(p, "letter of the correct choice.") {
		t.Errorf("prompt %q", p)
	}
}

func TestParseErrorsSayWhere(t *testing.T) {
	for src, want := range map[string]string{
		`{"question": "q"}`: "d.jsonl:1: the item has no target",
		"\n" + `{"question": "q", "target": "t", "x": 1}`:                                                    `d.jsonl:2: json: unknown field "x"`,
		`{"question": " ", "target": "t"}`:                                                                   "d.jsonl:1: the question is empty",
		`{"question": "q", "choices": ["a","b"], "target": "c"}`:                                             `target "c" is neither`,
		`{"question": "q", "input": "q", "target": "t"}`:                                                     "not both",
		`{"id": "x", "question": "q", "target": "t"}` + "\n" + `{"id": "x", "question": "r", "target": "t"}`: `item id "x" appears twice`,
		``: "no items",
	} {
		if _, err := Parse("d.jsonl", []byte(src), false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

func TestParseCSV(t *testing.T) {
	items, err := Parse("d.csv", []byte("\ufeffQuestion,Target,choices,topic\n\"Two, words?\",yes,,misc\nPick,Jupiter,Mars|Jupiter,space\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{ID: "1", Question: "Two, words?", Target: []string{"yes"}, Metadata: map[string]any{"topic": "misc"}},
		{ID: "2", Question: "Pick", Target: []string{"B"}, Choices: []string{"Mars", "Jupiter"}, Metadata: map[string]any{"topic": "space"}},
	}
	if !reflect.DeepEqual(items, want) {
		t.Errorf("got %+v\nwant %+v", items, want)
	}
	if _, err := Parse("d.csv", []byte("q,a\nx,y\n"), true); err == nil || !strings.Contains(err.Error(), "question (or input) column") {
		t.Errorf("header without question: %v", err)
	}
}

func TestLoadHashesAndFind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	os.WriteFile(path, []byte(`{"question": "What is 2 plus 2?", "target": "4"}`+"\n"+`{"question": "What is 2 plus 2? Then double it.", "target": "8"}`+"\n"), 0o644)
	ds, err := Load(path)
	if err != nil || len(ds.SHA256) != 64 {
		t.Fatalf("%v %+v", err, ds)
	}
	if it, ok := Find(ds.Items, "<ORIGINAL MESSAGE> What is 2 plus 2? Then double it. <END"); !ok || it.Target[0] != "8" {
		t.Errorf("Find picked %+v, want the longer question", it)
	}
	if _, ok := Find(ds.Items, "something else"); ok {
		t.Error("Find matched a text with no question")
	}
}
