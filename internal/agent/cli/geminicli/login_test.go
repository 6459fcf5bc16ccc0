package geminicli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli"
)

// A user's Google login of Gemini CLI, copied into the CLI's private
// home, is what a task without a key runs on: oauth_creds.json in its
// .gemini, 0600; settings that select it (oauth-personal); Code Assist's
// endpoint pinned; no key variable.
func TestPrepareUsesTheCopiedLogin(t *testing.T) {
	user, home := t.TempDir(), t.TempDir()
	const canary = `{"access_token":"CANARY-access","refresh_token":"CANARY-refresh","token_type":"Bearer","expiry_date":4102444800000}`
	src := filepath.Join(user, ".gemini", "oauth_creds.json")
	if err := os.MkdirAll(filepath.Dir(src), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.CopyLogin(user, home, cli.FindLogin(Vendor{}, user)); err != nil {
		t.Fatal(err)
	}
	cmd, err := Vendor{}.Prepare(&cli.Invocation{Home: home, Workdir: t.TempDir(), Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(home, ".gemini", "oauth_creds.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the login in the private home: %v %v", fi, err)
	}
	var s struct {
		Security struct {
			Auth struct{ SelectedType string }
		}
	}
	b, _ := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	if err := json.Unmarshal(b, &s); err != nil || s.Security.Auth.SelectedType != "oauth-personal" {
		t.Errorf("settings select %q (%v):\n%s", s.Security.Auth.SelectedType, err, b)
	}
	vars := map[string]string{}
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v // the last one wins, as for exec
		if strings.Contains(kv, "CANARY") {
			t.Errorf("the environment has %s", kv)
		}
	}
	if _, ok := vars["GEMINI_API_KEY"]; ok || vars["GOOGLE_API_KEY"] != "" {
		t.Errorf("a key variable: %v", vars)
	}
	if vars["CODE_ASSIST_ENDPOINT"] != CodeAssistEndpoint || vars["GOOGLE_GENAI_USE_VERTEXAI"] != "" {
		t.Errorf("CODE_ASSIST_ENDPOINT %q, GOOGLE_GENAI_USE_VERTEXAI %q", vars["CODE_ASSIST_ENDPOINT"], vars["GOOGLE_GENAI_USE_VERTEXAI"])
	}
	// With a key, API-key auth and no Code Assist, as before.
	if _, err := (Vendor{}).Prepare(&cli.Invocation{Home: home, Workdir: t.TempDir(), APIKey: "k"}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	if err := json.Unmarshal(b, &s); err != nil || s.Security.Auth.SelectedType != "gemini-api-key" {
		t.Errorf("with a key, settings select %q", s.Security.Auth.SelectedType)
	}
}
