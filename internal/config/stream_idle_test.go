package config

import "testing"

func TestStreamIdleTimeoutKey(t *testing.T) {
	cfg := parseOK(t, oneAgent+"timeout_settings:\n  stream_idle_timeout_seconds: 2.5\n", nil)
	if got := cfg.Orchestrator.StreamIdleTimeoutSeconds; got != 2.5 {
		t.Errorf("StreamIdleTimeoutSeconds = %v, want 2.5", got)
	}
	if ws := cfg.Warnings; len(ws) != 0 {
		t.Errorf("warnings for a known key:%s", dump(ws))
	}
	if got := parseOK(t, oneAgent, nil).Orchestrator.StreamIdleTimeoutSeconds; got != 0 {
		t.Errorf("absent key = %v, want 0 (the default)", got)
	}
	ds := diagnose(t, oneAgent+"timeout_settings: {stream_idle_timeout_seconds: 0}\n", nil)
	if _, ok := find(ds, "timeout_settings.stream_idle_timeout_seconds", Error); !ok {
		t.Errorf("zero idle timeout not reported:%s", dump(ds))
	}
}
