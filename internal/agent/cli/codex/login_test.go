package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli"
)

// A user's ChatGPT login of Codex, copied into the CLI's private home, is
// what a task without a key runs on: auth.json in CODEX_HOME, 0600, read
// from the file store; the built-in provider (ChatGPT's endpoint) without
// a base URL, massgen's provider with requires_openai_auth with one; no
// key variable.
func TestPrepareUsesTheCopiedLogin(t *testing.T) {
	user := t.TempDir()
	const canary = `{"OPENAI_API_KEY":null,"tokens":{"access_token":"CANARY-access","refresh_token":"CANARY-refresh"}}`
	src := filepath.Join(user, ".codex", "auth.json")
	if err := os.MkdirAll(filepath.Dir(src), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"", "http://127.0.0.1:9/v1"} {
		home := t.TempDir()
		if _, err := cli.CopyLogin(user, home, cli.FindLogin(Vendor{}, user)); err != nil {
			t.Fatal(err)
		}
		cmd, err := Vendor{}.Prepare(&cli.Invocation{Home: home, Workdir: t.TempDir(), BaseURL: base, Prompt: "p", Sandboxed: true})
		if err != nil {
			t.Fatal(err)
		}
		codexHome := ""
		for _, kv := range cmd.Env {
			k, v, _ := strings.Cut(kv, "=")
			if k == KeyVar || strings.Contains(kv, "CANARY") {
				t.Errorf("base %q: the environment has %s", base, kv)
			}
			if k == "CODEX_HOME" {
				codexHome = v
			}
		}
		fi, err := os.Stat(filepath.Join(codexHome, "auth.json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("base %q: auth.json in CODEX_HOME %s: %v %v", base, codexHome, fi, err)
		}
		b, _ := os.ReadFile(filepath.Join(codexHome, "config.toml"))
		conf := string(b)
		if !strings.Contains(conf, `"cli_auth_credentials_store" = "file"`) || strings.Contains(conf, `"env_key"`) || strings.Contains(conf, "CANARY") {
			t.Errorf("base %q: config.toml:\n%s", base, conf)
		}
		if !strings.Contains(conf, `"apps" = false`) {
			t.Errorf("base %q: ChatGPT apps are on:\n%s", base, conf)
		}
		custom := strings.Contains(conf, `"model_provider" = "massgen"`)
		if base == "" && (custom || strings.Contains(conf, "requires_openai_auth")) {
			t.Errorf("without a base URL the login's own provider applies:\n%s", conf)
		}
		if base != "" && (!custom || !strings.Contains(conf, `"requires_openai_auth" = true`) || !strings.Contains(conf, base)) {
			t.Errorf("with a base URL, massgen's provider on the login:\n%s", conf)
		}
	}
}
