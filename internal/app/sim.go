package app

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/massgen/massgen/internal/config"
	"github.com/massgen/massgen/internal/llmsim"
)

// startSims starts the in-process simulators of a team's `type: sim`
// agents and returns their base URLs by simKey. The simulator is shared by
// the agents that use the same scenario; the per-agent latency settings
// become per-model entries of that scenario. The caller closes t on error.
func (t *team) startSims(cfg *config.Config) (map[string]string, error) {
	sims := map[string]string{} // simKey → base URL
	simScripts := map[string]*llmsim.Scenario{}
	for _, a := range cfg.Agents {
		if a.Backend.Type != "sim" {
			continue
		}
		key := simKey(a)
		sc := simScripts[key]
		if sc == nil {
			var err error
			if sc, err = loadScenario(key, a.Backend.Sim, configDir(cfg)); err != nil {
				return nil, usageErr("agent %s: %v", a.ID, err)
			}
			simScripts[key] = sc
		}
		if s := a.Backend.Sim; s != nil && (s.TTFTMillis > 0 || s.TokensPerSecond > 0) {
			ms := sc.Models[simModel(a)]
			if s.TTFTMillis > 0 {
				ms.TTFTMillis = &s.TTFTMillis
			}
			if s.TokensPerSecond > 0 {
				ms.TokensPerSecond = &s.TokensPerSecond
			}
			sc.Models[simModel(a)] = ms
		}
	}
	for key, sc := range simScripts {
		srv := llmsim.New(sc)
		// Nobody reads this simulator's request log: keep it small, as a
		// team may serve requests for as long as massgen serve runs.
		srv.DropMessages()
		srv.KeepRequests(256)
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return nil, execErr("cannot start the simulator: %w", err)
		}
		t.sims = append(t.sims, srv)
		sims[key] = url
	}
	return sims, nil
}

// simKey names the simulator an agent runs on: one per scenario file, one
// per agent with an inline scenario, one shared by all the rest.
func simKey(a config.Agent) string {
	if a.Backend.Sim != nil && a.Backend.Sim.Inline != nil {
		return "inline:" + a.ID
	}
	if a.Backend.Sim == nil || a.Backend.Sim.Scenario == "" {
		return ""
	}
	return a.Backend.Sim.Scenario // config resolved it against the config file's directory
}

// configDir is where the config's relative paths start ("" for a config
// given as a value).
func configDir(cfg *config.Config) string {
	if cfg.Path == "" || strings.HasPrefix(cfg.Path, "@") {
		return ""
	}
	return filepath.Dir(cfg.Path)
}

func loadScenario(key string, sim *config.SimBackend, dir string) (*llmsim.Scenario, error) {
	var sc *llmsim.Scenario
	var err error
	switch {
	case key == "":
		return &llmsim.Scenario{Models: map[string]llmsim.ModelScript{}}, nil
	case strings.HasPrefix(key, "inline:"):
		var data []byte
		if data, err = yaml.Marshal(sim.Inline); err == nil {
			sc, err = llmsim.ParseScenarioIn(dir, data)
		}
		if err != nil {
			err = fmt.Errorf("inline scenario: %w", err)
		}
	default:
		sc, err = llmsim.LoadScenario(key)
	}
	if err != nil {
		return nil, err
	}
	if sc.Models == nil {
		sc.Models = map[string]llmsim.ModelScript{}
	}
	return sc, nil
}

func simModel(a config.Agent) string { return cmp.Or(a.Backend.Model, "sim") }
