package app

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/massgen/massgen/internal/agent/cli"
	"github.com/massgen/massgen/internal/coord"
	"github.com/massgen/massgen/internal/redact"
)

// A CLI agent without an API key, whose endpoint is not on this machine,
// runs on its user's own login of that CLI (a Claude subscription, a
// ChatGPT account, a Google account), as upstream's do: each run copies
// the login's files (cli.Login) from the user's home into the CLI's
// private home, mode 0600, where the CLI reads them and writes a refreshed
// token back. The user's own files are only read; the copies go with the
// private home at the run's end (or at the next run's sweep after a kill
// -9), and their tokens are registered for redaction, so no log, event or
// error holds them.

// localEndpoint tells whether an endpoint is on this machine: it needs no
// key, and gets no login (the user's tokens go to the vendor's endpoint or
// one the user named elsewhere, never to a local gateway or simulator by
// default). A variable, so a test can run a login against the simulator.
var localEndpoint = isLocal

// userHome is the home directory of the user massgen runs as, where the
// CLIs keep their logins ("": none known, no login).
func userHome(getenv func(string) string) string { return getenv("HOME") }

// noCredentials is the error of a CLI agent with neither a key nor a
// login: it names both ways to give it one.
func noCredentials(id, typ string, keyEnv []string, v cli.Vendor, home string) error {
	msg := fmt.Sprintf("%s: backend %s needs an API key or its CLI's login: set %s (in the environment or a .env file) "+
		"or api_key in the config", coord.AgentRef(id), typ, strings.Join(keyEnv, " or "))
	if l, ok := v.(cli.Login); ok {
		var where []string
		for _, f := range l.LoginFiles() {
			where = append(where, filepath.Join(cmp.Or(home, "~"), f))
		}
		msg += fmt.Sprintf(", or log in with %s as this user (there is no %s)", l.LoginCommand(), strings.Join(where, " nor "))
	}
	return usageErr("%s", msg)
}

// copyLogin puts m's login into the CLI's private home and registers its
// tokens as secrets.
func copyLogin(m *cliMember, home string) error {
	contents, err := cli.CopyLogin(m.userHome, home, m.login)
	if err != nil {
		return err
	}
	for _, c := range contents {
		registerLoginSecrets(c)
	}
	return nil
}

// registerLoginSecrets registers the secrets of a login file for
// redaction: in a JSON file, every string under a key that names a token,
// key, secret or credential (accessToken, refresh_token, id_token,
// OPENAI_API_KEY, …); in another file, its whole content.
func registerLoginSecrets(b []byte) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		redact.Secret(strings.TrimSpace(string(b)))
		return
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(k, e)
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		case string:
			k := strings.ToLower(key)
			for _, w := range []string{"token", "key", "secret", "credential", "password"} {
				if strings.Contains(k, w) {
					redact.Secret(v)
					return
				}
			}
		}
	}
	walk("", v)
}

// loginNetworkWarning says what a CLI on a login cannot do with its
// network limited to the login's endpoint: reach the login's token
// service.
func loginNetworkWarning(id, typ string) string {
	w := fmt.Sprintf("agent %s: its %s CLI runs on this user's login (no API key), and its network reaches the login's endpoint "+
		"but not its token service: a token that expires during the run cannot be renewed (the agent then fails with an "+
		"auth error; running the CLI yourself renews it)", id, typ)
	if typ == "gemini_cli" {
		w += "; Gemini CLI checks its token with Google (oauth2.googleapis.com) at every start, which this network does not reach either"
	}
	return w + ". command_line_allow_network: true on its backend gives the CLI the host's network"
}
