package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/massgen/massgen/internal/provider"
)

// KeyProvider is one API key `massgen setup` can store: its variable, the
// backend types that read it, and where a cheap request can check it.
type KeyProvider struct {
	Env      string   // OPENAI_API_KEY
	Backends []string // openai, chatcompletion
	BaseURL  string   // "" when the endpoint is the user's (azure_openai, poe): not checkable
	Wire     provider.Wire
}

// SetupKeys lists the keys the provider catalogue knows, in its order, one
// entry per variable (the first variable of each backend: GOOGLE_API_KEY is
// read too, but GEMINI_API_KEY is the one to write).
func SetupKeys() []KeyProvider {
	var out []KeyProvider
	for _, typ := range provider.Names() {
		s, _ := provider.Lookup(typ)
		if len(s.KeyEnv) == 0 || s.Wire == provider.WireCLI || s.Wire == provider.WireSim {
			continue
		}
		if strings.HasPrefix(s.BaseURL, "http://localhost") {
			continue // a local server's optional key (vllm, sglang)
		}
		name := s.KeyEnv[0]
		if i := slices.IndexFunc(out, func(k KeyProvider) bool { return k.Env == name }); i >= 0 {
			out[i].Backends = append(out[i].Backends, typ)
			continue
		}
		out = append(out, KeyProvider{Env: name, Backends: []string{typ}, BaseURL: s.BaseURL, Wire: s.Wire})
	}
	return out
}

// LookupKey finds the provider of a key variable (any of its names).
func LookupKey(name string) (KeyProvider, bool) {
	for _, k := range SetupKeys() {
		if k.Env == name {
			return k, true
		}
		for _, b := range k.Backends {
			if s, _ := provider.Lookup(b); slices.Contains(s.KeyEnv, name) {
				k.Env = name
				return k, true
			}
		}
	}
	return KeyProvider{}, false
}

// UserDotEnv is where `massgen setup` keeps keys by default:
// ~/.config/massgen/.env (LoadEnv reads it after ./.env and ~/.massgen/.env).
func UserDotEnv(env *Env) (string, error) {
	home := env.Getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", usageErr("no home directory to keep the keys in: use --local for ./.env")
		}
	}
	return filepath.Join(home, ".config", "massgen", ".env"), nil
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// ParseKeyValue reads one KEY=VALUE (as --key and --from-stdin give them).
// Errors never contain the value.
func ParseKeyValue(s string) (key, value string, err error) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "export "))
	key, value, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !ok || !envName().MatchString(key) {
		name := key
		if !envName().MatchString(name) {
			name = "the line" // it may be a pasted key: do not repeat it
		}
		return "", "", usageErr("%s is not KEY=VALUE (e.g. OPENAI_API_KEY=sk-…)", name)
	}
	value = strings.TrimSpace(value)
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	if value == "" {
		return "", "", usageErr("%s has an empty value", key)
	}
	if strings.ContainsAny(value, "\r\n") {
		return "", "", usageErr("%s: a key is one line", key)
	}
	return key, value, nil
}

// KeyValue is one variable to store.
type KeyValue struct{ Key, Value string }

// WriteDotEnv stores the keys in a .env file with mode 0600: a line that
// sets one of them is replaced in place, other lines are kept as they are,
// new keys are appended. The file is replaced atomically (written beside it,
// then renamed), so a crash leaves the old file or the new one.
func WriteDotEnv(path string, kvs []KeyValue) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	pending := map[string]string{}
	var order []string
	for _, kv := range kvs {
		if _, ok := pending[kv.Key]; !ok {
			order = append(order, kv.Key)
		}
		pending[kv.Key] = kv.Value
	}
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(old)))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if k := lineKey(line); k != "" {
			if v, ok := pending[k]; ok {
				line = k + "=" + quoteEnv(v)
				delete(pending, k)
			} else if _, done := findKV(kvs, k); done {
				continue // a second line for a key already replaced
			}
		}
		b.WriteString(line + "\n")
	}
	for _, k := range order {
		if v, ok := pending[k]; ok {
			b.WriteString(k + "=" + quoteEnv(v) + "\n")
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".env.tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func findKV(kvs []KeyValue, k string) (string, bool) {
	for _, kv := range kvs {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return "", false
}

// lineKey is the variable a .env line sets, or "".
func lineKey(line string) string {
	l := strings.TrimSpace(line)
	if l == "" || strings.HasPrefix(l, "#") {
		return ""
	}
	l = strings.TrimSpace(strings.TrimPrefix(l, "export "))
	k, _, ok := strings.Cut(l, "=")
	k = strings.TrimSpace(k)
	if !ok || !envName().MatchString(k) {
		return ""
	}
	return k
}

// quoteEnv writes a value so that config.LoadDotEnv reads it back as is.
func quoteEnv(v string) string {
	if !strings.ContainsAny(v, " \t#\"'\\") {
		return v
	}
	if !strings.Contains(v, "'") {
		return "'" + v + "'"
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// KeyStatus is the outcome of checking a key.
type KeyStatus int

const (
	KeyValid     KeyStatus = iota // the provider accepted it
	KeyInvalid                    // the provider refused it (401/403)
	KeyUnchecked                  // no check possible or inconclusive; Note says why
	KeyOffline                    // the provider could not be reached
)

// KeyCheck is what one check found. Note never contains the key.
type KeyCheck struct {
	Status KeyStatus
	Note   string
}

// CheckKey asks the provider for its model list with the key, the
// cheapest request that needs a valid one (nothing is generated or
// billed). baseURL overrides the provider's (tests, proxies); the request is
// bounded by 10 s.
func CheckKey(ctx context.Context, client *http.Client, kp KeyProvider, key, baseURL string) KeyCheck {
	base := strings.TrimRight(baseURL, "/")
	if base == "" {
		base = strings.TrimRight(kp.BaseURL, "/")
	}
	if base == "" {
		return KeyCheck{KeyUnchecked, "not checked: the endpoint is your own (set it as base_url in the config)"}
	}
	var url string
	hdr := http.Header{}
	switch kp.Wire {
	case provider.WireAnthropic:
		url = base + "/v1/models"
		hdr.Set("x-api-key", key)
		hdr.Set("anthropic-version", "2023-06-01")
	case provider.WireGemini:
		url = base + "/v1beta/models"
		hdr.Set("x-goog-api-key", key)
	case provider.WireChat, provider.WireResponses:
		url = base + "/models"
		hdr.Set("Authorization", "Bearer "+key)
	default:
		return KeyCheck{KeyUnchecked, "not checked: no cheap request for this provider"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return KeyCheck{KeyUnchecked, "not checked: " + err.Error()}
	}
	req.Header = hdr
	req.Close = true // one request: keep no idle connection behind
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if offline(err) {
			return KeyCheck{KeyOffline, fmt.Sprintf("not checked: %s is not reachable (offline?); saved anyway", hostOf(url))}
		}
		return KeyCheck{KeyUnchecked, fmt.Sprintf("not checked: GET %s failed; saved anyway", url)}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		return KeyCheck{KeyValid, fmt.Sprintf("valid (GET %s: %d)", url, resp.StatusCode)}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return KeyCheck{KeyInvalid, fmt.Sprintf("refused by the provider (GET %s: %d)", url, resp.StatusCode)}
	case resp.StatusCode == http.StatusBadRequest && kp.Wire == provider.WireGemini:
		return KeyCheck{KeyInvalid, fmt.Sprintf("refused by the provider (GET %s: %d, Google's answer to a bad key)", url, resp.StatusCode)}
	}
	return KeyCheck{KeyUnchecked, fmt.Sprintf("not checked: GET %s answered %d; saved anyway", url, resp.StatusCode)}
}

// offline reports a request that never reached a server: no route, no
// DNS, refused, timed out.
func offline(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	return errors.As(err, &dns) || errors.As(err, &op) || errors.Is(err, context.DeadlineExceeded)
}

func hostOf(url string) string {
	s := url[strings.Index(url, "//")+2:]
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return s
}
