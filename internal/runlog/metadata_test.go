package runlog

import (
	"path/filepath"
	"testing"

	"github.com/goccy/go-yaml"
)

func TestNewCreatesDirMetadataAndStatus(t *testing.T) {
	raw := []byte("agents:\n  - id: alpha\n    backend:\n      type: openai\n      model: gpt-4o\n      api_key: sk-secret\n      max_tokens: 100\n  - id: beta\n    backend:\n      api_key: ${ANTHROPIC_API_KEY}\n")
	w := newTestWriter(t, Metadata{Question: "Q?", ConfigPath: "cfg.yaml", ConfigRaw: raw, CLIArgs: []string{"--config", "cfg.yaml"}, Version: "0.1.0"})
	if got, want := filepath.Base(w.Dir()), "log_20250304_102030_123456"; got != want {
		t.Errorf("dir = %s, want %s", got, want)
	}
	var md map[string]any
	if err := yaml.Unmarshal([]byte(read(t, filepath.Join(w.Dir(), "execution_metadata.yaml"))), &md); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"question", "timestamp", "config_path", "config", "cli_args", "massgen_version", "go_version", "working_directory", "agents"} {
		if _, ok := md[k]; !ok {
			t.Errorf("execution_metadata.yaml lacks %q", k)
		}
	}
	if md["question"] != "Q?" || md["massgen_version"] != "0.1.0" || md["config_path"] != "cfg.yaml" {
		t.Errorf("metadata = %v", md)
	}
	cfg := md["config"].(map[string]any)["agents"].([]any)
	b0 := cfg[0].(map[string]any)["backend"].(map[string]any)
	b1 := cfg[1].(map[string]any)["backend"].(map[string]any)
	if b0["api_key"] != "<redacted>" || b0["model"] != "gpt-4o" || b1["api_key"] != "${ANTHROPIC_API_KEY}" {
		t.Errorf("config not parsed/redacted as expected: %v / %v", b0, b1)
	}
	if v, ok := b0["max_tokens"].(uint64); !ok || v != 100 {
		t.Errorf("max_tokens = %#v, want 100 (not redacted)", b0["max_tokens"])
	}
	if agents := md["agents"].([]any); len(agents) != 3 || agents[2].(map[string]any)["simulated"] != true {
		t.Errorf("agents = %v", agents)
	}

	var st StatusView
	readJSON(t, filepath.Join(w.Dir(), "status.json"), &st)
	if st.Meta.Status != "running" || st.Coordination.Phase != "coordinating" || len(st.Agents) != 3 || st.Agents["alpha"].Status != "idle" {
		t.Errorf("initial status = %+v", st)
	}

	// A second writer started at the same instant gets its own directory.
	w2, err := New(filepath.Dir(w.Dir()), t0, Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if w2.Dir() != w.Dir()+"_2" {
		t.Errorf("second dir = %s", w2.Dir())
	}
}

func TestConfigThatDoesNotParseIsKeptAsText(t *testing.T) {
	w := newTestWriter(t, Metadata{ConfigRaw: []byte("agents: [unclosed\n")})
	var md map[string]any
	if err := yaml.Unmarshal([]byte(read(t, filepath.Join(w.Dir(), "execution_metadata.yaml"))), &md); err != nil {
		t.Fatal(err)
	}
	if md["config"] != "agents: [unclosed\n" {
		t.Errorf("config = %#v", md["config"])
	}
}
