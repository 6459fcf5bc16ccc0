package runlog

import (
	"github.com/massgen/massgen/internal/redact"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/massgen/massgen/internal/event"
)

// Metadata is what the CLI knows about a run before it starts.
type Metadata struct {
	Question   string
	ConfigPath string
	ConfigRaw  []byte // the config file as read (may be nil)
	CLIArgs    []string
	Version    string
	Agents     []AgentInfo
	// Attempts puts each orchestration attempt's files under attempt_<N>/;
	// set it when max_orchestration_restarts > 0.
	Attempts bool
	// IgnoredFeatures are the config's settings the run does not act on;
	// status.json lists them (meta.ignored_features).
	IgnoredFeatures []string
}

// AgentInfo describes one configured agent, in config order.
type AgentInfo = event.AgentInfo

// writeMetadata writes execution_metadata.yaml. Keys are ordered (MapSlice)
// so the file reads like the original's, question first.
func (w *Writer) writeMetadata() error {
	wd, _ := os.Getwd() // best effort: an unknown cwd is not worth failing a run
	agents := make([]yaml.MapSlice, 0, len(w.meta.Agents))
	for _, a := range w.meta.Agents {
		agents = append(agents, yaml.MapSlice{
			item("id", a.ID),
			item("backend", a.Backend),
			item("model", a.Model),
			item("simulated", a.Simulated),
		})
	}
	args := w.meta.CLIArgs
	if args == nil {
		args = []string{}
	}
	doc := yaml.MapSlice{
		item("question", w.meta.Question),
		item("timestamp", w.started.Format(time.RFC3339Nano)),
		item("log_dir", w.dir),
		item("config_path", w.meta.ConfigPath),
		item("config", parseConfig(w.meta.ConfigRaw)),
		item("cli_args", args),
		item("massgen_version", w.meta.Version),
		item("go_version", runtime.Version()),
		item("working_directory", wd),
		item("orchestration_attempts", w.meta.Attempts),
		item("agents", agents),
	}
	data, err := yaml.MarshalWithOptions(doc, yaml.Indent(2), yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return err
	}
	return w.put(filepath.Join(w.dir, "execution_metadata.yaml"), data)
}

func item(k string, v any) yaml.MapItem { return yaml.MapItem{Key: k, Value: v} }

// parseConfig returns the config as structured YAML (key order kept) when
// it parses, else the raw text: a config that does not parse is exactly the
// one someone will want to read in the log.
func parseConfig(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := yaml.UnmarshalWithOptions(raw, &v, yaml.UseOrderedMap()); err != nil || v == nil {
		return string(raw)
	}
	return redactConfig(v)
}

// redactConfig hides literal secrets (api_key and the like) in the parsed config.
// Logs get shared in bug reports; a ${VAR} reference is kept since it is
// not a secret and shows where the key came from.
func redactConfig(v any) any {
	switch t := v.(type) {
	case yaml.MapSlice:
		out := make(yaml.MapSlice, len(t))
		for i, it := range t {
			k, _ := it.Key.(string)
			if s, ok := it.Value.(string); ok && secretKey(k) && s != "" && !strings.HasPrefix(s, "${") {
				out[i] = yaml.MapItem{Key: it.Key, Value: "<redacted>"}
				continue
			}
			out[i] = yaml.MapItem{Key: it.Key, Value: redactConfig(it.Value)}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = redactConfig(e)
		}
		return out
	case string:
		// A key in a value whose key does not say so (an MCP server's
		// args, a URL's query): registered secrets and key shapes.
		return redact.String(t)
	default:
		return v
	}
}

func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"api_key", "apikey", "secret", "password", "token"} {
		if strings.Contains(k, s) {
			// max_tokens and friends are limits, not secrets.
			return !strings.HasSuffix(k, "tokens") && !strings.HasPrefix(k, "max_")
		}
	}
	return false
}
