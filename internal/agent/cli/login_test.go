package cli_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/agent"
	"github.com/massgen/massgen/internal/agent/cli"
)

// loginVendor is a CLI with a login of two files.
type loginVendor struct{ quitter }

func (loginVendor) LoginFiles() []string { return []string{".q/creds.json", ".q/account.json"} }
func (loginVendor) LoginCommand() string { return "q login" }

// The login files found in the user's home are copied into the CLI's
// private home at the same paths, 0600 in 0700 directories; a token the
// CLI then writes goes to the copy alone.
func TestLoginIsCopiedIntoThePrivateHome(t *testing.T) {
	user, home := t.TempDir(), t.TempDir()
	if got := cli.FindLogin(loginVendor{}, user); len(got) != 0 {
		t.Fatalf("a home without a login has %v", got)
	}
	if got := cli.FindLogin(quitter{}, user); got != nil {
		t.Fatalf("a vendor without logins finds %v", got)
	}
	must(t, os.MkdirAll(filepath.Join(user, ".q", "account.json"), 0o755)) // a directory is no login file
	must(t, os.WriteFile(filepath.Join(user, ".q", "creds.json"), []byte("CANARY-token-1234"), 0o644))
	found := cli.FindLogin(loginVendor{}, user)
	if !slices.Equal(found, []string{".q/creds.json"}) {
		t.Fatalf("found %v", found)
	}
	contents, err := cli.CopyLogin(user, home, found)
	if err != nil {
		t.Fatal(err)
	}
	if len(contents) != 1 || string(contents[0]) != "CANARY-token-1234" {
		t.Errorf("contents %q", contents)
	}
	copied := filepath.Join(home, ".q", "creds.json")
	fi, err := os.Stat(copied)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("copy: %v %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(copied)); di.Mode().Perm() != 0o700 {
		t.Errorf("its directory is %v", di.Mode())
	}
	if b, _ := os.ReadFile(copied); string(b) != "CANARY-token-1234" {
		t.Errorf("copy holds %q", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(copied)); len(entries) != 1 {
		t.Errorf("the copy left %d files beside it", len(entries))
	}
	// The CLI refreshes its token: the user's file is not touched.
	must(t, os.WriteFile(copied, []byte("REFRESHED"), 0o600))
	if b, _ := os.ReadFile(filepath.Join(user, ".q", "creds.json")); string(b) != "CANARY-token-1234" {
		t.Errorf("the user's file became %q", b)
	}
	// A second copy (the next run's) replaces the first and keeps 0600.
	if _, err := cli.CopyLogin(user, home, found); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(copied); string(b) != "CANARY-token-1234" {
		t.Errorf("copy holds %q", b)
	}
	// Paths stay inside the homes, and errors hold no content.
	if _, err := cli.CopyLogin(user, home, []string{"../x"}); err == nil {
		t.Error("a login file outside the home was copied")
	}
	must(t, os.Chmod(filepath.Join(user, ".q", "creds.json"), 0o000))
	if os.Getuid() != 0 {
		if _, err := cli.CopyLogin(user, home, found); err == nil || strings.Contains(err.Error(), "CANARY") {
			t.Errorf("unreadable login: %v", err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// endpointVendor is a CLI whose login uses its own endpoint.
type endpointVendor struct{ loginVendor }

func (endpointVendor) DefaultBaseURL() string { return "https://api.example.com/v1" }
func (endpointVendor) LoginBaseURL() string   { return "https://login.example.com/backend" }

// A task without a key is limited to the login's endpoint; with a key, or
// with a base URL of the agent's, to that.
func TestLimitedNetworkOfALogin(t *testing.T) {
	for _, c := range []struct{ key, base, want string }{
		{"", "", "https://login.example.com/backend"},
		{"k", "", "https://api.example.com/v1"},
		{"", "https://gw.example.com/v1", "https://gw.example.com/v1"},
	} {
		var got []cli.Endpoint
		a := &cli.Agent{ID: "a", Vendor: endpointVendor{}, Path: "/bin/false", Home: t.TempDir(), Workdir: t.TempDir(),
			APIKey: c.key, BaseURL: c.base, Network: func(eps []cli.Endpoint) (cli.Isolation, error) {
				got = eps
				return cli.Isolation{}, errors.New("no network here")
			}}
		for range a.Run(t.Context(), agent.Task{Kind: agent.TaskPresent}, nil) {
		}
		if len(got) == 0 || got[0].URL != c.want || got[0].Key != c.key {
			t.Errorf("key %q, base %q: endpoints %+v, want %s", c.key, c.base, got, c.want)
		}
	}
}
