package config

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/massgen/massgen/internal/provider"
)

// referenceCorpora are upstream MassGen's example configs, kept beside the
// project (never copied into it): v0.1.12's, which massgen was first built
// against, and v0.1.73's, the version it implements. min is how many
// configs each holds, so that a walk that finds only some of them fails.
var referenceCorpora = []struct {
	name, dir string
	min       int
}{
	{"v0.1.12", "../../../shared/reference/massgen-configs", 118},
	{"v0.1.73", "../../../shared/reference/massgen-configs-v0.1.73", 264},
}

// referenceConfigs is v0.1.12's corpus, for the tests that predate v0.1.73's.
const referenceConfigs = "../../../shared/reference/massgen-configs"

// knownInvalid lists reference files that really are not team configs,
// with the reason; they must fail, with that reason.
var knownInvalid = map[string]string{
	"v0.1.73/rate_limits/rate_limits.yaml": "this is a rate-limits file",
}

// unsupportedVerdict is provider.Judge's word for a backend kind massgen
// recognises but cannot run yet (claude_code, codex, gemini_cli, copilot,
// ag2); its suggestion must say what to use instead.
var (
	unsupportedVerdict = regexp.MustCompile(`backend type '(\w+)' is recognised but not supported by this version yet`)
	insteadHint        = regexp.MustCompile(`^(use type: \w+|give the agent a backend of its own)`)
)

// wrongClaims are features this version implements: a warning must never
// say it does not support them (it may say so of a sub-feature, by name).
var wrongClaims = []string{"MCP tools", "custom tools", "workspaces", "context paths", "command execution"}

// Every config of both corpora loads: no errors, except a backend kind
// massgen cannot run yet (which names what to use instead) and the files
// of knownInvalid. Every warning is located and names what is not done.
// The test logs, per corpus, how many configs load and a table of the
// warnings by feature (go test -run TestReferenceCorpora -v).
func TestReferenceCorpora(t *testing.T) {
	for _, corpus := range referenceCorpora {
		t.Run(corpus.name, func(t *testing.T) {
			if _, err := os.Stat(corpus.dir); err != nil {
				t.Skipf("reference configs not found at %s (they live beside the project, not in it): %v", corpus.dir, err)
			}
			var files []string
			err := filepath.WalkDir(corpus.dir, func(path string, de fs.DirEntry, err error) error {
				if err == nil && !de.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(path)) {
					files = append(files, path)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) < corpus.min {
				t.Fatalf("%d configs under %s, want at least %d", len(files), corpus.dir, corpus.min)
			}
			byFeature := map[string]map[string]bool{} // feature → files
			uses := map[string]int{}                  // feature → warnings
			loaded, cli, invalid := 0, map[string]int{}, 0
			for _, path := range files {
				rel, _ := filepath.Rel(corpus.dir, path)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				// No environment: loading must not depend on keys being set.
				cfg, diags := parse(data, path, envOf(nil))
				errs := diags.Errors()
				if reason, ok := knownInvalid[corpus.name+"/"+rel]; ok {
					invalid++
					if len(errs) == 0 || !strings.Contains(errs[0].Message, reason) {
						t.Errorf("%s: listed as invalid (%s), got %v", rel, reason, errs)
					}
					continue
				}
				kinds := map[string]bool{}
				for _, d := range errs {
					m := unsupportedVerdict.FindStringSubmatch(d.Message)
					switch {
					case m == nil:
						t.Errorf("%s: error: %s", rel, d)
					case !regexp.MustCompile(`(?m)^\s*type:\s*["']?` + m[1] + `\b`).Match(data):
						t.Errorf("%s: refused as %s, which it does not name: %s", rel, m[1], d)
					case !insteadHint.MatchString(d.Suggestion):
						t.Errorf("%s: the verdict does not say what to use instead: %s", rel, d)
					default:
						kinds[m[1]] = true
					}
				}
				switch {
				case len(errs) == 0:
					loaded++
					if len(cfg.Agents) == 0 {
						t.Errorf("%s: no agents", rel)
					}
					for _, a := range cfg.Agents {
						spec, _ := provider.Lookup(a.Backend.Type)
						if a.ID == "" || a.Backend.Type == "" || a.Backend.Model == "" && !spec.ModelOptional {
							t.Errorf("%s: incomplete agent %+v", rel, a)
						}
					}
				case len(kinds) > 0:
					cli[strings.Join(slices.Sorted(maps.Keys(kinds)), "+")]++
				}
				for _, w := range diags {
					if w.Severity != Warning {
						continue
					}
					if w.Line == 0 || !strings.HasPrefix(w.String(), path+":") {
						t.Errorf("%s: warning without a position: %s", rel, w)
					}
					f := warningFeature(w)
					for _, c := range wrongClaims {
						if strings.Contains(w.Message, "does not support "+c+" yet") {
							t.Errorf("%s: says it does not support %s, which it does: %s", rel, c, w)
						}
					}
					if byFeature[f] == nil {
						byFeature[f] = map[string]bool{}
					}
					byFeature[f][rel] = true
					uses[f]++
				}
			}
			t.Logf("%s: %d configs: %d load, %d refused for a backend kind massgen cannot run yet %v, %d not team configs",
				corpus.name, len(files), loaded, sumOf(cli), cli, invalid)
			t.Logf("warnings by feature (configs, warnings):\n%s", featureTable(byFeature, uses))
		})
	}
}

func sumOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

var (
	notSupported = regexp.MustCompile(`does not support (.+) yet`)
	quoted       = regexp.MustCompile(`'[^']*'`)
)

// warningFeature names what a warning is about, for the table: the feature
// this version does not support yet, or the kind of warning.
func warningFeature(w Diagnostic) string {
	leaf := w.Key[strings.LastIndex(w.Key, ".")+1:]
	leaf = regexp.MustCompile(`\[\d+\]`).ReplaceAllString(leaf, "[]")
	switch {
	case notSupported.MatchString(w.Message):
		return notSupported.FindStringSubmatch(w.Message)[1]
	case strings.Contains(w.Message, "upstream MassGen does not read it either"), strings.Contains(w.Message, "upstream MassGen does not read it"):
		return "upstream placeholders (no effect upstream either): " + leaf
	case strings.Contains(w.Message, "unknown"):
		return "unknown keys: " + leaf
	case strings.Contains(w.Message, "not sent"):
		return "not sent to the provider: " + leaf
	case strings.Contains(w.Message, "environment variable"):
		return "unset environment variables"
	}
	return quoted.ReplaceAllString(w.Message, "'…'")
}

func featureTable(byFeature map[string]map[string]bool, uses map[string]int) string {
	names := slices.SortedFunc(maps.Keys(byFeature), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(byFeature[b]), len(byFeature[a])), cmp.Compare(a, b))
	})
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %4d %4d  %s\n", len(byFeature[n]), uses[n], n)
	}
	return b.String()
}

// Every key the upstream examples use is classified: acted on, an ignored
// feature (listed by IgnoredFeatures), or an unknown key with a suggestion;
// none reaches a provider unless it is a parameter of its API, and every
// backend key in them decodes without a type error.
func TestReferenceConfigKeysAreClassified(t *testing.T) {
	for _, corpus := range referenceCorpora {
		if _, err := os.Stat(corpus.dir); err != nil {
			t.Skipf("reference configs not found at %s: %v", corpus.dir, err)
		}
		err := filepath.WalkDir(corpus.dir, func(path string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".json") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			cfg, diags := parse(data, path, envOf(nil))
			for _, d := range diags {
				switch {
				case unsupportedVerdict.MatchString(d.Message):
					// the one verdict of provider.Judge, checked by TestReferenceCorpora
				case strings.Contains(d.Key, ".backend.") && d.Severity == Error && !strings.HasSuffix(d.Key, ".model"):
					t.Errorf("backend key rejected: %s", d)
				case strings.Contains(d.Message, "unknown") && d.Suggestion == "":
					t.Errorf("unknown key without a suggestion: %s", d)
				}
			}
			if cfg == nil {
				return nil
			}
			for _, a := range cfg.Agents {
				spec, _ := provider.Lookup(a.Backend.Type)
				fam, native := familyParams[spec.Wire]
				for k := range a.Backend.Params {
					if _, ok := providerParams[k]; !ok || (native && !slices.Contains(fam.params, k)) {
						t.Errorf("%s: agent %s sends %q, which is not a parameter of its API", path, a.ID, k)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
