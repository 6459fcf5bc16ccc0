package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent/cli"
)

// A user's Claude Code login, copied into the CLI's private home, is what
// a task without a key runs on: the credentials file where Claude Code
// reads it, 0600, and no key nor other credential in its environment.
func TestPrepareUsesTheCopiedLogin(t *testing.T) {
	user, home := t.TempDir(), t.TempDir()
	const canary = `{"claudeAiOauth":{"accessToken":"CANARY-access","refreshToken":"CANARY-refresh","expiresAt":4102444800000}}`
	src := filepath.Join(user, ".claude", ".credentials.json")
	if err := os.MkdirAll(filepath.Dir(src), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, []byte(canary), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.CopyLogin(user, home, cli.FindLogin(Vendor{}, user)); err != nil {
		t.Fatal(err)
	}
	cmd := prepare(t, &cli.Invocation{Home: home, Workdir: t.TempDir(), Prompt: "p"})
	fi, err := os.Stat(filepath.Join(home, ".claude", ".credentials.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the login in the private home: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".claude", ".credentials.json")); string(b) != canary {
		t.Errorf("copied %q", b)
	}
	for _, kv := range cmd.Env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "ANTHROPIC_API_KEY" || k == "ANTHROPIC_AUTH_TOKEN" || k == "CLAUDE_CONFIG_DIR" || strings.Contains(kv, "CANARY") {
			t.Errorf("the environment has %s", kv)
		}
	}
	for _, a := range cmd.Args {
		if strings.Contains(a, "CANARY") {
			t.Errorf("an argument holds the login: %s", a)
		}
	}
	// The home Claude Code reads is the private one (HOME, set by the frame).
	if v, ok := flag(cmd.Args, "--setting-sources"); !ok || v != "" {
		t.Errorf("--setting-sources %q", v)
	}
}
