package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mountsHead = "agents:\n  - id: a\n    backend:\n      type: openai\n      model: gpt-4o\n      cwd: ws\n      enable_mcp_command_line: true\n" +
	"      command_line_execution_mode: docker\n      command_line_docker_credentials:\n"

// additional_mounts are read as upstream writes them — a host path
// (relative to the config file, ~ expanded) to {bind, mode}, read-only
// at the same path by default — and pass_all_env is taken, with a
// warning that says what it exposes; neither is "ignored" any more.
func TestAdditionalMountsAndPassAllEnv(t *testing.T) {
	src := mountsHead + `        pass_all_env: true
        additional_mounts:
          data: {bind: /data, mode: rw}
          ~/models:
            bind: /models
          /srv/cache:
`
	cfg, err := Parse([]byte(src), "/srv/team/config.yaml", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	dk := cfg.Agents[0].Backend.CommandLine.Docker
	want := []DockerMount{
		{Host: "/srv/cache", Bind: "/srv/cache"},
		{Host: "/srv/team/data", Bind: "/data", Write: true},
		{Host: filepath.Join(os.Getenv("HOME"), "models"), Bind: "/models"},
	}
	slices.SortFunc(want, func(a, b DockerMount) int { return strings.Compare(a.Host, b.Host) })
	if !dk.PassAllEnv || !slices.Equal(dk.Mounts, want) {
		t.Errorf("PassAllEnv %v, Mounts %+v, want %+v", dk.PassAllEnv, dk.Mounts, want)
	}
	if len(cfg.Warnings) != 1 || cfg.Warnings[0].Line != 10 || !strings.Contains(cfg.Warnings[0].Message, "DANGEROUS") ||
		!strings.Contains(cfg.Warnings[0].Message, "API key") {
		t.Errorf("want one warning on pass_all_env's line that says what it exposes:%s", dump(cfg.Warnings))
	}
	for _, w := range cfg.Warnings {
		if strings.Contains(w.Message, "ignored") {
			t.Errorf("still said to be ignored: %s", w)
		}
	}
}

// A mount of the machine's own state, the user's whole home, massgen's
// state, the engine's socket or the temporary directory is refused where
// it is written; so are a relative bind, a bind over the container's
// system directories, an unknown mode, and the wrong types; an unknown
// key is a warning, as elsewhere.
func TestAdditionalMountsRefused(t *testing.T) {
	const k = "agents[0].backend.command_line_docker_credentials.additional_mounts"
	home := os.Getenv("HOME")
	for _, c := range []struct {
		body, key, want string
		line            int
	}{
		{"          /: {bind: /host}\n", k + "./", "whole machine", 11},
		{"          /etc: {bind: /hostetc}\n", k + "./etc", "system directory", 11},
		{"          /proc/1: {bind: /p}\n", k + "./proc/1", "system directory", 11},
		{"          /var/run/docker.sock: {bind: /var/run/docker.sock}\n", k + "./var/run/docker.sock", "system directory", 11},
		{"          /srv/engine.sock: {bind: /e.sock}\n", k + "./srv/engine.sock", "socket", 11},
		{"          ~/: {bind: /me}\n", k + ".~/", "whole home", 11},
		{"          /home: {bind: /h}\n", k + "./home", "whole home", 11},
		{"          ~/.massgen: {bind: /m}\n", k + ".~/.massgen", "massgen's own state", 11},
		{"          /srv/proj/.massgen/workspaces: {bind: /w}\n", k + "./srv/proj/.massgen/workspaces", "run directory", 11},
		{"          " + filepath.Clean(os.TempDir()) + ": {bind: /t}\n", k + "." + filepath.Clean(os.TempDir()), "every run's private files", 11},
		{"          /srv/data: {bind: data}\n", k + "./srv/data.bind", "absolute path", 11},
		{"          /srv/data: {bind: /usr/local}\n", k + "./srv/data.bind", "system directory of the container", 11},
		{"          /srv/data: {bind: /}\n", k + "./srv/data.bind", "system directory of the container", 11},
		{"          /srv/data: {bind: /data, mode: rwx}\n", k + "./srv/data.mode", "invalid mode", 11},
		{"          /srv/data: /data\n", k + "./srv/data", "map", 11},
	} {
		if home == "" && strings.Contains(c.body, "~") {
			continue
		}
		if c.body == "          /home: {bind: /h}\n" && !strings.HasPrefix(home, "/home/") {
			continue // the refusal is of the directory that holds the home
		}
		ds := diagnose(t, mountsHead+"        additional_mounts:\n"+c.body, nil)
		d, ok := find(ds, c.key, Error)
		if !ok || d.File != "test.yaml" || d.Line != c.line || !strings.Contains(d.Message, c.want) {
			t.Errorf("%q: %s (found %v); all:%s", c.body, d, ok, dump(ds))
		}
	}
	ds := diagnose(t, mountsHead+"        additional_mounts:\n          /srv/data: {bind: /data, ro: true}\n", nil)
	if d, ok := find(ds, k+"./srv/data.ro", Warning); !ok || d.Line != 11 || !strings.Contains(d.Message, "unknown key") {
		t.Errorf("an unknown key of a mount:%s", dump(ds))
	}
	ds = diagnose(t, mountsHead+"        additional_mounts: [/srv/data]\n", nil)
	if d, ok := find(ds, k, Error); !ok || d.Line != 10 {
		t.Errorf("a list for additional_mounts:%s", dump(ds))
	}
	ds = diagnose(t, mountsHead+"        pass_all_env: yes please\n", nil)
	if d, ok := find(ds, "agents[0].backend.command_line_docker_credentials.pass_all_env", Error); !ok || d.Line != 10 {
		t.Errorf("a string for pass_all_env:%s", dump(ds))
	}
}
