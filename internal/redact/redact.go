// Package redact masks secrets in text that came from outside: a provider
// that echoes the bearer key in a 401 body, a proxy that prints the request
// headers on its error page, a tool that dumps its environment.
//
// Two nets catch a secret. The first is exact: every API key the process
// resolves (from a config's api_key or the environment) is registered with
// Secret, and String replaces each occurrence of one. The second is by
// shape: keys of the common vendors (sk-…, sk-ant-…, sk-or-…, AIza…, xai-…,
// gsk_…, AKIA…, ghp_…, github_pat_…) and the usual carriers of a secret
// ("Bearer …", "Authorization: …", "x-api-key: …", "api_key=…",
// "\"api_key\": \"…\"") are masked even when the key was never registered
// (another process's key, one a server made up).
//
// Redaction happens where an error becomes text (llm.Error, the clipping of
// a provider's error body), so everything downstream (stderr, massgen.log,
// status.json, events, the replay log, the sessions database, server error
// bodies) holds masked text; the server and the store apply it again on
// what they write, as defence in depth.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// MinSecretLen is the shortest value Secret registers: a shorter one
// ("none", "test", "x") is no secret worth hiding and would mask ordinary
// words everywhere.
const MinSecretLen = 8

// Mark replaces the hidden part of a secret.
const Mark = "…[redacted]"

var secrets = struct {
	sync.RWMutex
	list []string // longest first, so a key containing another is masked whole
}{}

// Secret registers values to be masked by String from now on, for the life
// of the process. Empty, short (< MinSecretLen) and repeated values are
// ignored; surrounding white space is trimmed.
func Secret(values ...string) {
	secrets.Lock()
	defer secrets.Unlock()
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < MinSecretLen || slices.Contains(secrets.list, v) {
			continue
		}
		secrets.list = append(secrets.list, v)
	}
	slices.SortStableFunc(secrets.list, func(a, b string) int { return len(b) - len(a) })
}

// SecretVar registers the value of an environment variable whose name says
// it holds a secret (a part KEY, APIKEY, TOKEN, SECRET, PASSWORD, PASSWD,
// PAT or CREDENTIALS: OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
// DB_PASSWORD), as Secret does; other variables are left alone.
func SecretVar(name, value string) {
	if secretName(name) {
		Secret(value)
	}
}

// Environ registers, as SecretVar, the secret variables of an environment
// in os.Environ's NAME=value form.
func Environ(environ []string) {
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok {
			SecretVar(name, value)
		}
	}
}

func secretName(name string) bool {
	for part := range strings.FieldsFuncSeq(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch part {
		case "KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PAT", "CREDENTIALS", "CREDENTIAL":
			return true
		}
	}
	return false
}

// shape is one pattern of a key or of a secret's carrier.
type shape struct {
	re *regexp.Regexp
	// keep is how many leading submatches (after the whole match) are kept
	// verbatim before the mark; the rest of the match is hidden.
	keep int
	// needDigit: mask only a value that contains a digit, so "api_key:
	// expected a string" stays readable.
	needDigit bool
}

// tokenChars are the characters of a key or token.
const tokenChars = `A-Za-z0-9_\-`

// shapes are compiled on first use, not at package init: every massgen
// process links this package, and most (massgen --version, config
// validate) never mask anything (start-up, DESIGN.md §3a "Weight").
var shapes = sync.OnceValue(func() []shape {
	return []shape{
		// Carriers first: the header or assignment names what follows as a
		// secret, whatever its shape.
		{re: regexp.MustCompile(`(?i)(\bauthorization["']?\s*[:=]\s*["']?)((?:bearer|basic|token)\s+)?[^\s"',;]{4,}`), keep: 2},
		{re: regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=\-]{8,}`), keep: 1},
		{re: regexp.MustCompile(`(?i)(\b(?:x-api-key|api-key|x-goog-api-key)["']?\s*[:=]\s*["']?)[^\s"',;&]{8,}`), keep: 1},
		{re: regexp.MustCompile(`(?i)(\b(?:api[_-]?key|access[_-]?token|secret[_-]?key|client[_-]?secret|auth[_-]?token)["']?\s*[:=]\s*["']?)[^\s"',;&]{8,}`), keep: 1, needDigit: true},
		// Vendor shapes, the most specific first.
		{re: regexp.MustCompile(`\b(sk-ant-)[` + tokenChars + `]{8,}`), keep: 1},
		{re: regexp.MustCompile(`\b(sk-or-)[` + tokenChars + `]{8,}`), keep: 1},
		{re: regexp.MustCompile(`\b(sk-proj-)[` + tokenChars + `]{8,}`), keep: 1},
		{re: regexp.MustCompile(`\b(sk-)[` + tokenChars + `]{16,}`), keep: 1},
		{re: regexp.MustCompile(`\b(AIza)[0-9A-Za-z_\-]{20,}`), keep: 1},
		{re: regexp.MustCompile(`\b(xai-)[A-Za-z0-9]{16,}`), keep: 1},
		{re: regexp.MustCompile(`\b(gsk_)[A-Za-z0-9]{16,}`), keep: 1},
		{re: regexp.MustCompile(`\b((?:AKIA|ASIA))[0-9A-Z]{16}\b`), keep: 1},
		{re: regexp.MustCompile(`\b(gh[pousr]_)[A-Za-z0-9]{20,}`), keep: 1},
		{re: regexp.MustCompile(`\b(github_pat_)[A-Za-z0-9_]{20,}`), keep: 1},
	}
})

// Registered returns s with every registered secret masked, as String
// does, and nothing else: for text that is not massgen's own (a command's
// output), where a key-shaped token is more likely code than a key.
func Registered(s string) string {
	if s == "" {
		return s
	}
	secrets.RLock()
	defer secrets.RUnlock()
	for _, v := range secrets.list {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, prefix(v)+Mark)
		}
	}
	return s
}

// String returns s with every registered secret and every key-shaped token
// masked: the recognisable prefix (sk-, Bearer, "api_key": ) stays, the
// rest becomes Mark.
func String(s string) string {
	if s == "" {
		return s
	}
	s = Registered(s)
	for _, sh := range shapes() {
		s = sh.re.ReplaceAllStringFunc(s, func(m string) string {
			if strings.Contains(m, Mark) {
				return m // already masked (a registered key after its carrier)
			}
			sub := sh.re.FindStringSubmatch(m)
			kept := strings.Join(sub[1:1+sh.keep], "")
			if sh.needDigit && !strings.ContainsAny(m[len(kept):], "0123456789") {
				return m
			}
			return kept + Mark
		})
	}
	return s
}

// prefix is what stays visible of a registered secret: a vendor prefix
// ending in '-' or '_' within its first 8 bytes (sk-, xai-, gsk_), else
// nothing.
func prefix(v string) string {
	if i := strings.IndexAny(v, "-_"); i > 0 && i < 8 && i < len(v)/2 {
		return v[:i+1]
	}
	return ""
}

// Error is the text of err, redacted by String; "" for nil.
func Error(err error) string {
	if err == nil {
		return ""
	}
	return String(err.Error())
}

// Masked wraps err so that its text is redacted by String while errors.Is
// and errors.As still see what it wraps; nil stays nil.
func Masked(err error) error {
	if err == nil {
		return nil
	}
	return masked{err}
}

type masked struct{ err error }

func (m masked) Error() string { return String(m.err.Error()) }
func (m masked) Unwrap() error { return m.err }
