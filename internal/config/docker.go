package config

// Docker mode's settings (command_line_execution_mode: docker), upstream's
// command_line_docker_* keys: the image, its limits and network, sudo,
// and what of the user's is shared with the container on purpose.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Docker is how an agent's command container is made.
type Docker struct {
	Image   string  // command_line_docker_image; "" = massgen/mcp-runtime:latest
	Memory  int64   // command_line_docker_memory_limit in bytes; 0 = none
	CPUs    float64 // command_line_docker_cpu_limit; 0 = none
	Network string  // command_line_docker_network_mode: none (default), bridge, host
	Sudo    bool    // command_line_docker_enable_sudo
	// CredentialFiles are paths under the user's home shared read-only
	// (command_line_docker_credentials.mount, by upstream's names).
	CredentialFiles []string
	// CredentialEnv names environment variables passed in
	// (command_line_docker_credentials.env_vars).
	CredentialEnv []string
	// EnvFile is command_line_docker_credentials.env_file, made absolute
	// against the config file's directory ("" = none): with it the run
	// loads ~/.massgen/.env, this file, then ./.env, later files winning,
	// and passes their variables in (EnvFromFile, when set, picks which).
	EnvFile string
	// EnvFromFile is command_line_docker_credentials.env_vars_from_file.
	EnvFromFile []string
	// PassAllEnv is command_line_docker_credentials.pass_all_env: massgen's
	// whole environment goes in.
	PassAllEnv bool
	// Mounts are command_line_docker_credentials.additional_mounts.
	Mounts []DockerMount
	// Packages installed in each new container
	// (command_line_docker_packages: system, python, npm).
	System, Python, NPM []string
}

// DockerCredentialFiles are the names command_line_docker_credentials.mount
// takes, and the file or directory under the user's home each one shares.
var DockerCredentialFiles = map[string]string{
	"ssh_keys":    ".ssh",
	"git_config":  ".gitconfig",
	"gh_config":   ".config/gh",
	"npm_config":  ".npmrc",
	"pypi_config": ".pypirc",
	// v0.1.73: the CLI agents' logins, for tools that run them in the container
	"claude_config": ".claude",
	"codex_config":  ".codex",
	"gemini_config": ".gemini",
}

var (
	credentialKeys = []string{"mount", "env_vars", "env_file", "env_vars_from_file", "pass_all_env", "additional_mounts"}
	packageKeys    = []string{"system", "python", "npm"}
)

// dockerKey checks one command_line_docker_* key (the image and the
// network and sudo switches are checked as a string, an enum, a boolean).
func (d *decoder) dockerKey(p *pair, key string) {
	switch p.key {
	case "command_line_docker_memory_limit":
		if !d.present(key, p) {
			return
		}
		if _, err := parseSize(scalarText(p.val)); err != nil || (p.val.kind != kindString && p.val.kind != kindInt) {
			d.fail(p.val.pos, key, fmt.Sprintf("invalid memory limit %s", describe(p.val)), "write a size such as 2g, 512m or 1073741824")
		}
	case "command_line_docker_cpu_limit":
		if v, ok := d.number(key, p, "a number of CPUs"); ok && v <= 0 {
			d.fail(p.val.pos, key, fmt.Sprintf("must be more than 0, got %v", v), "write a number of CPUs such as 2 or 0.5")
		}
	case "command_line_docker_credentials":
		m, ok := d.mapping(key, p, "a map with 'mount' and 'env_vars'")
		if !ok {
			return
		}
		for _, e := range m.pairs {
			switch e.key {
			case "mount":
				names, ok := d.stringList(join(key, "mount"), e)
				if !ok {
					continue // its type error is said; positions below would not match
				}
				known := slices.Sorted(maps.Keys(DockerCredentialFiles))
				for i, n := range names {
					if _, ok := DockerCredentialFiles[n]; !ok {
						d.fail(e.val.items[i].pos, index(join(key, "mount"), i), fmt.Sprintf("unknown credential '%s'", n), oneOf(n, known))
					}
				}
			case "env_vars", "env_vars_from_file":
				d.stringList(join(key, e.key), e)
				if e.key == "env_vars_from_file" && m.get("env_file") == nil {
					d.warnAt(e.keyPos, join(key, e.key), "'env_vars_from_file' without 'env_file' reads no file, so it passes nothing",
						"add env_file: .env (the run then reads ~/.massgen/.env, that file and ./.env)")
				}
			case "env_file":
				if s, ok := d.str(join(key, e.key), e); ok {
					// Relative to the config file, as the sim scenario is;
					// embedded examples (@examples/…) have no directory, so
					// theirs stays relative to the working directory.
					if rest, ok := strings.CutPrefix(s, "~/"); ok {
						if home, err := os.UserHomeDir(); err == nil {
							s = filepath.Join(home, rest)
						}
					}
					if !filepath.IsAbs(s) && d.file != "" && !strings.HasPrefix(d.file, "@") {
						s = filepath.Join(filepath.Dir(d.file), s)
					}
					e.val.s = s // what dockerOf reads from the backend's Extra
				}
			case "pass_all_env":
				d.passAllEnv(e, join(key, e.key)) // dockermounts.go
			case "additional_mounts":
				d.additionalMounts(e, join(key, e.key))
			default:
				d.unknown(e, key, credentialKeys)
			}
		}
	case "command_line_docker_packages":
		m, ok := d.mapping(key, p, "a map with 'system', 'python' and 'npm' lists")
		if !ok {
			return
		}
		if pre := m.get("preinstall"); pre != nil && len(m.pairs) == 1 {
			// Also taken nested under preinstall.
			key, m = join(key, "preinstall"), pre.val
			if m.kind != kindMap {
				d.typeError(key, m, "a map with 'system', 'python' and 'npm' lists")
				return
			}
		}
		for _, e := range m.pairs {
			if slices.Contains(packageKeys, e.key) {
				d.stringList(join(key, e.key), e)
			} else {
				d.unknown(e, key, packageKeys)
			}
		}
	}
}

// parseSize reads a size as Docker writes it: a number of bytes with an
// optional unit b, k, m, g (powers of 1024; "kb", "mib" and the like too).
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "ib"), "b")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("not a size")
	}
	return int64(v * float64(mult)), nil
}

// dockerOf reads a backend's checked docker keys.
func dockerOf(extra map[string]any) Docker {
	var dk Docker
	dk.Image, _ = extra["command_line_docker_image"].(string)
	switch v := extra["command_line_docker_memory_limit"].(type) {
	case string:
		dk.Memory, _ = parseSize(v)
	case int:
		dk.Memory = int64(v)
	}
	switch v := extra["command_line_docker_cpu_limit"].(type) {
	case float64:
		dk.CPUs = v
	case int:
		dk.CPUs = float64(v)
	}
	dk.Network, _ = extra["command_line_docker_network_mode"].(string)
	dk.Sudo, _ = extra["command_line_docker_enable_sudo"].(bool)
	if c, ok := extra["command_line_docker_credentials"].(map[string]any); ok {
		for _, n := range stringsOf(c["mount"]) {
			if rel, ok := DockerCredentialFiles[n]; ok {
				dk.CredentialFiles = append(dk.CredentialFiles, rel)
			}
		}
		dk.CredentialEnv = stringsOf(c["env_vars"])
		dk.EnvFile, _ = c["env_file"].(string)
		dk.EnvFromFile = stringsOf(c["env_vars_from_file"])
		dk.PassAllEnv, _ = c["pass_all_env"].(bool)
		dk.Mounts = dockerMountsOf(c["additional_mounts"])
	}
	if p, ok := extra["command_line_docker_packages"].(map[string]any); ok {
		if pre, ok := p["preinstall"].(map[string]any); ok && len(p) == 1 {
			p = pre
		}
		dk.System, dk.Python, dk.NPM = stringsOf(p["system"]), stringsOf(p["python"]), stringsOf(p["npm"])
	}
	return dk
}
