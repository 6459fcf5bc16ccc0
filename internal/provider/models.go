package provider

import (
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/massgen/massgen/internal/inputlimit"
	"github.com/massgen/massgen/internal/llm"
	"github.com/massgen/massgen/internal/suggest"
)

// ModelInfo is what the catalogue knows about a model.
type ModelInfo struct {
	ID      string
	Context int     `yaml:"context"` // context window in tokens
	Input   float64 `yaml:"input"`   // USD per million input tokens
	Output  float64 `yaml:"output"`  // USD per million output tokens
	Cached  float64 `yaml:"cached"`  // USD per million cached input tokens (0: billed as input)
	// CacheWrite is USD per million input tokens written to a prompt cache
	// (0: billed as input).
	CacheWrite float64 `yaml:"cache_write"`
	// Family: every model named ID-… is priced as this one (the
	// simulator's sim-alpha, sim-beta, …).
	Family bool `yaml:"family"`
}

// Cost prices one usage record. Cached reads and cache writes are part of
// the input count and billed at their own rates when the catalogue has them.
func (m ModelInfo) Cost(u llm.Usage) float64 {
	cachedRate := m.Cached
	if cachedRate == 0 {
		cachedRate = m.Input
	}
	writeRate := m.CacheWrite
	if writeRate == 0 {
		writeRate = m.Input
	}
	fresh := max(u.InputTokens-u.CachedTokens-u.CacheWriteTokens, 0)
	return (float64(fresh)*m.Input + float64(u.CachedTokens)*cachedRate + float64(u.CacheWriteTokens)*writeRate +
		float64(u.OutputTokens)*m.Output) / 1e6
}

//go:embed models.yaml
var builtinModels []byte

type catalogueFile struct {
	Models map[string]ModelInfo `yaml:"models"`
}

var (
	catalogueOnce sync.Once
	catalogue     map[string]ModelInfo
	catalogueErr  error
)

// loadCatalogue reads the built-in list, then the file named by
// MASSGEN_MODEL_CATALOG (its entries win), once per process.
func loadCatalogue(getenv func(string) string) (map[string]ModelInfo, error) {
	catalogueOnce.Do(func() {
		catalogue, catalogueErr = parseCatalogue(builtinModels, "models.yaml")
		if catalogueErr != nil {
			return
		}
		if p := getenv("MASSGEN_MODEL_CATALOG"); p != "" {
			data, err := os.ReadFile(p)
			if err != nil {
				catalogueErr = fmt.Errorf("MASSGEN_MODEL_CATALOG: %w", err)
				return
			}
			extra, err := parseCatalogue(data, p)
			if err != nil {
				catalogueErr = err
				return
			}
			for id, m := range extra {
				catalogue[id] = m
			}
		}
	})
	return catalogue, catalogueErr
}

func parseCatalogue(data []byte, name string) (map[string]ModelInfo, error) {
	var f catalogueFile
	lim := inputlimit.Config
	lim.What, lim.MaxBytes, lim.Usual = "model catalogue", 1<<20, "catalogues need fewer than 5"
	if err := inputlimit.CheckYAML(data, name, lim); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("model catalogue %s: %s", name, yaml.FormatError(err, false, false))
	}
	out := map[string]ModelInfo{}
	for id, m := range f.Models {
		m.ID = id
		out[strings.ToLower(id)] = m
	}
	return out, nil
}

// LookupModel finds a model in the catalogue: exact id first, then the
// longest catalogue id of which it is a snapshot (gpt-4o-2024-08-06,
// claude-sonnet-4-5-latest) or a family member; a "provider/" prefix is
// ignored. Any other name is not in the catalogue, even when a catalogue id
// starts it: gpt-4o-mnii is a typo of gpt-4o-mini, not a gpt-4o.
func LookupModel(model string, getenv func(string) string) (ModelInfo, bool, error) {
	cat, err := loadCatalogue(getenv)
	if err != nil {
		return ModelInfo{}, false, err
	}
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if info, ok := cat[m]; ok {
		return info, true, nil
	}
	best := ""
	for id, info := range cat {
		rest, ok := strings.CutPrefix(m, id)
		if ok && len(id) > len(best) && (snapshot().MatchString(rest) || info.Family && strings.HasPrefix(rest, "-")) {
			best = id
		}
	}
	if best == "" {
		return ModelInfo{}, false, nil
	}
	return cat[best], true, nil
}

// snapshot matches what providers append to a model id for a dated or
// pinned version of it: -2024-08-06, -20250929, -0613, -001, -latest.
var snapshot = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-(\d{4}-\d{2}-\d{2}|\d{3,8}|latest)$`) })

// SuggestModel returns the catalogue model closest to a name that is not in
// the catalogue, for "did you mean" hints, or "".
func SuggestModel(model string, getenv func(string) string) string {
	cat, err := loadCatalogue(getenv)
	if err != nil {
		return ""
	}
	ids := make([]string, 0, len(cat))
	for _, m := range cat {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids) // deterministic among equally close names
	name := model
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return suggest.Closest(name, ids)
}

// ModelWarning judges a backend's model name against the catalogue, in the
// same words for `massgen config validate` and a run: a name close to a
// catalogue model is probably a typo ("did you mean"); a name far from
// every one, on a hosted provider at its own endpoint, is unknown to
// massgen, which cannot count its cost. It returns "" when the model is in
// the catalogue, or when it cannot know better (the simulator, coding-agent
// CLIs, local servers, Azure deployment names, a base_url of the user's).
func ModelWarning(typ, model, baseURL string, getenv func(string) string) (problem, suggestion string) {
	if model == "" {
		return "", ""
	}
	if _, priced, err := LookupModel(model, getenv); err != nil || priced {
		return "", ""
	}
	spec, known := Lookup(typ)
	if !known || spec.Wire == WireSim || spec.Wire == WireCLI || spec.Wire == WireExternal {
		return "", ""
	}
	if near := SuggestModel(model, getenv); near != "" {
		return fmt.Sprintf("model %q is not in the model catalogue", model), fmt.Sprintf("did you mean %q? (its cost is not counted)", near)
	}
	hosted := len(spec.KeyEnv) > 0 && strings.HasPrefix(spec.BaseURL, "https://") && (baseURL == "" || baseURL == spec.BaseURL)
	if !hosted {
		return "", ""
	}
	return fmt.Sprintf("unknown model %q: not in the model catalogue, so its cost is not counted", model),
		fmt.Sprintf("check the name against %s's model list", typ)
}
