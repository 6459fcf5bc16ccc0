package config

// command_line_docker_credentials' additional_mounts and pass_all_env
// (v0.1.73's _docker_manager.py): a host path bound into the agent's
// container, read-only unless its mode says rw, and massgen's whole
// environment passed in.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// DockerMount is one additional_mounts entry.
type DockerMount struct {
	Host  string // absolute, ~ expanded, relative to the config file
	Bind  string // the path in the container (default: Host)
	Write bool   // mode: rw (default ro)
}

// refusedMountSources are host paths no additional mount may be, contain
// or lie in: the machine's own state and massgen's control of the
// engine. A bind of one would give the container the host (its devices,
// its processes, its configuration) or the engine that makes containers.
var refusedMountSources = []string{"/proc", "/sys", "/dev", "/boot", "/etc", "/run", "/var/run", "/var/lib/docker",
	"/usr", "/bin", "/sbin", "/lib", "/lib64"}

// refusedMountTargets are container paths no additional mount may take:
// the container's own system directories, which the image provides.
var refusedMountTargets = []string{"/", "/proc", "/sys", "/dev", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/tmp"}

// additionalMounts checks command_line_docker_credentials.additional_mounts:
// {host_path: {bind: container_path, mode: ro|rw}}. It rewrites each host
// path as it resolves it (what dockerOf reads).
func (d *decoder) additionalMounts(e *pair, key string) {
	m, ok := d.mapping(key, e, "a map of host paths to {bind, mode}")
	if !ok {
		return
	}
	home, _ := os.UserHomeDir()
	for _, mp := range m.pairs {
		k := join(key, mp.key)
		host := mp.key
		if rest, ok := strings.CutPrefix(host, "~/"); ok && home != "" {
			host = filepath.Join(home, rest)
		} else if host == "~" {
			host = home
		}
		if !filepath.IsAbs(host) && d.file != "" && !strings.HasPrefix(d.file, "@") {
			host = filepath.Join(filepath.Dir(d.file), host)
		}
		host = filepath.Clean(host)
		if why := refusedSource(host, home); why != "" {
			d.fail(mp.keyPos, k, fmt.Sprintf("refused: %s", why),
				"mount a directory of your project, or use mount: [...] for the shared logins (ssh_keys, git_config, …)")
			continue
		}
		mp.key = host
		if mp.val.isNull() {
			continue // upstream's defaults: at the same path, read-only
		}
		if mp.val.kind != kindMap {
			d.typeError(k, mp.val, "a map with 'bind' and 'mode'")
			continue
		}
		for _, f := range mp.val.pairs {
			switch f.key {
			case "bind":
				s, ok := d.str(join(k, "bind"), f)
				if !ok {
					continue
				}
				switch {
				case !strings.HasPrefix(s, "/"):
					d.fail(f.val.pos, join(k, "bind"), fmt.Sprintf("'%s' is not an absolute path in the container", s), "write an absolute path such as /data")
				case slices.ContainsFunc(refusedMountTargets, func(t string) bool { return within(filepath.Clean(s), t) && (t != "/" || filepath.Clean(s) == "/") }):
					d.fail(f.val.pos, join(k, "bind"), fmt.Sprintf("refused: '%s' is a system directory of the container", s), "bind it under another path, such as /data")
				}
			case "mode":
				if s, ok := d.str(join(k, "mode"), f); ok && s != "ro" && s != "rw" {
					d.fail(f.val.pos, join(k, "mode"), fmt.Sprintf("invalid mode '%s'", s), "use ro (read-only, the default) or rw")
				}
			default:
				d.unknown(f, k, []string{"bind", "mode"})
			}
		}
	}
}

// refusedSource says why host may not be bound into a container ("": it
// may).
func refusedSource(host, home string) string {
	if host == "/" {
		return "'/' is the whole machine"
	}
	if host == filepath.Clean(os.TempDir()) {
		return fmt.Sprintf("'%s' holds every run's private files (the CLI agents' homes among them)", host)
	}
	if home != "" && (host == home || within(home, host)) {
		return fmt.Sprintf("'%s' holds your whole home directory (its keys and logins among it)", host)
	}
	for _, p := range refusedMountSources {
		if within(host, p) || within(p, host) {
			return fmt.Sprintf("'%s' is or holds the system directory %s", host, p)
		}
	}
	if strings.HasSuffix(host, ".sock") || filepath.Base(host) == "docker.sock" {
		return fmt.Sprintf("'%s' is a socket: a host service (the Docker engine's would give the container the machine)", host)
	}
	if home != "" {
		for _, dir := range []string{".massgen", ".config/massgen", ".local/share/massgen"} {
			p := filepath.Join(home, dir)
			if within(host, p) || within(p, host) {
				return fmt.Sprintf("'%s' is or holds massgen's own state (%s: keys, sessions, logs)", host, p)
			}
		}
	}
	if filepath.Base(host) == ".massgen" || strings.Contains(host, "/.massgen/") {
		return fmt.Sprintf("'%s' is massgen's run directory (the other agents' workspaces, logs)", host)
	}
	return ""
}

// within reports whether p is dir or under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// passAllEnv warns about command_line_docker_credentials.pass_all_env.
func (d *decoder) passAllEnv(e *pair, key string) {
	if on, ok := d.boolean(key, e); ok && on {
		d.warnAt(e.keyPos, key, "pass_all_env: true passes massgen's whole environment into the container: every API key in it "+
			"can be read by the commands there, and by the model through them (DANGEROUS)",
			"list the variables the commands need in env_vars instead")
	}
}

// dockerMountsOf reads the checked additional_mounts.
func dockerMountsOf(v any) []DockerMount {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	hosts := make([]string, 0, len(m))
	for h := range m {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var out []DockerMount
	for _, h := range hosts {
		dm := DockerMount{Host: h, Bind: h}
		if c, ok := m[h].(map[string]any); ok {
			if b, ok := c["bind"].(string); ok && b != "" {
				dm.Bind = filepath.Clean(b)
			}
			dm.Write = c["mode"] == "rw"
		}
		out = append(out, dm)
	}
	return out
}
