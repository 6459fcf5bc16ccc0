package llmtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// RecordingsDir is where the provider recordings are, relative to an
// adapter package (internal/llm/<adapter>). They are real provider traffic
// kept beside the project (see reference/provider-recordings/README.md),
// read where they lie and never copied into the repository.
const RecordingsDir = "../../../../shared/reference/provider-recordings"

// Cassette is the part of a go-vcr v2 file the tests need.
type Cassette struct {
	Interactions []Interaction `yaml:"interactions"`
}

// Interaction is one recorded request and the response it got.
type Interaction struct {
	Request struct {
		Body string `yaml:"body"`
		URL  string `yaml:"url"`
	} `yaml:"request"`
	Response struct {
		Body    string              `yaml:"body"`
		Headers map[string][]string `yaml:"headers"`
		Code    int                 `yaml:"code"`
	} `yaml:"response"`
}

// LoadCassette reads and parses the recording at path, failing the test if
// it cannot.
func LoadCassette(t testing.TB, path string) *Cassette {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c Cassette
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return &c
}

// Recordings returns the recordings matching globs, each relative to
// RecordingsDir, in order. The first path element of the first glob names
// the recordings folder: when it is absent (the recordings are not checked
// out beside the project) the test is skipped; when it is there but nothing
// matches, the test fails.
func Recordings(t testing.TB, globs ...string) []string {
	t.Helper()
	return recordingsIn(t, RecordingsDir, globs...)
}

func recordingsIn(t testing.TB, root string, globs ...string) []string {
	t.Helper()
	if len(globs) == 0 {
		t.Fatal("llmtest.Recordings: no pattern")
	}
	dir := filepath.Join(root, strings.SplitN(globs[0], "/", 2)[0])
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("provider recordings not found at %s (they live beside the project, in ../shared/reference): %v", dir, err)
	}
	var files []string
	for _, g := range globs {
		matches, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatalf("recordings pattern %s: %v", g, err)
		}
		files = append(files, matches...)
	}
	if len(files) == 0 {
		t.Fatalf("no recordings match %s under %s", strings.Join(globs, ", "), root)
	}
	return files
}
