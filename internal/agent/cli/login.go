package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Login is a Vendor whose CLI can run on its user's own login (a Claude
// subscription, a ChatGPT account, a Google account) instead of an API
// key. When an agent has no key, the program that builds the team copies
// the login's files from the user's home into the CLI's private home
// (CopyLogin) and Prepare, given no APIKey, sets the CLI up to use them.
type Login interface {
	// LoginFiles are the files of the CLI's login, relative to the home
	// directory (".claude/.credentials.json"): where the CLI keeps them
	// in the user's home and reads them in its private one.
	LoginFiles() []string
	// LoginCommand says how a user logs in ("claude login").
	LoginCommand() string
}

// FindLogin returns the files of v's login that exist in the user's home
// userHome (relative paths; none when v has no Login or the user has not
// logged in).
func FindLogin(v Vendor, userHome string) []string {
	l, ok := v.(Login)
	if !ok || userHome == "" {
		return nil
	}
	var found []string
	for _, rel := range l.LoginFiles() {
		if fi, err := os.Stat(filepath.Join(userHome, rel)); err == nil && fi.Mode().IsRegular() {
			found = append(found, rel)
		}
	}
	return found
}

// CopyLogin copies the login files files (relative paths, from FindLogin)
// from userHome into home, the CLI's private home, at the same relative
// paths: directories 0700, files 0600, written whole or not at all. It
// returns each file's content, so the caller can register its secrets
// for redaction. A token the CLI refreshes is written to the copy only:
// the user's file is never written. Errors name paths, never content.
func CopyLogin(userHome, home string, files []string) ([][]byte, error) {
	var contents [][]byte
	for _, rel := range files {
		if !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("login file %s is not inside the home directory", rel)
		}
		src := filepath.Join(userHome, rel)
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("cannot read the login file %s: %w", src, err)
		}
		dst := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return nil, fmt.Errorf("cannot copy the login file %s: %w", rel, err)
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".login-*")
		if err != nil {
			return nil, fmt.Errorf("cannot copy the login file %s: %w", rel, err)
		}
		_, err = tmp.Write(b)
		err = errors.Join(err, tmp.Chmod(0o600), tmp.Close())
		if err == nil {
			err = os.Rename(tmp.Name(), dst)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return nil, fmt.Errorf("cannot copy the login file %s: %w", rel, err)
		}
		contents = append(contents, b)
	}
	return contents, nil
}

// LoginEndpoint is a Login whose CLI talks to another endpoint on a login
// than with a key (Codex: ChatGPT's backend; Gemini CLI: Code Assist): a
// task without a key whose agent names no base URL has its network
// limited to this one (Agent.Network), and Prepare gets its route as
// BaseURL.
type LoginEndpoint interface {
	LoginBaseURL() string
}
