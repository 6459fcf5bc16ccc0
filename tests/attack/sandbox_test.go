package attack

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// probe runs cmd inside the sandbox the way via says — "cmd": the
// hostile model's execute_command; "mcp": the hostile MCP server's tool;
// "mcp-start": the hostile MCP server as it starts — with its output in
// out.txt of the workspace. It returns that output ("" and ran=false when
// the sandbox refused to run it at all) and the run.
func probe(t *testing.T, dir, via, cmd string, s team) (out string, ran bool, r result) {
	t.Helper()
	wrapped := fmt.Sprintf("( %s ) > out.txt 2>&1; echo ran > ran.txt", cmd)
	switch via {
	case "cmd":
		s.coord = append(s.coord, sh(wrapped))
	case "mcp":
		s.mcp = evilServer("")
		s.coord = append(s.coord, mcpRun(wrapped))
	case "mcp-start":
		s.mcp = evilServer(wrapped)
		s.coord = append(s.coord, mcpRun("true"))
	default:
		t.Fatalf("via %q", via)
	}
	r = runTeam(t, dir, s, runOpts{})
	out, _ = wsFile(dir, "out.txt")
	_, ran = wsFile(dir, "ran.txt")
	if !ran {
		t.Logf("the attempt did not run (refused before it started):\n%s", r)
	}
	return out, ran, r
}

var vias = []string{"cmd", "mcp", "mcp-start"}

// Class 1: the API keys in massgen's environment (the canaries) never
// reach a sandboxed command or an MCP server.
func TestEnvironment(t *testing.T) {
	needBwrap(t)
	needPython(t)
	attacks := map[string]string{
		"env":                         "env",
		"printenv":                    "printenv OPENAI_API_KEY ANTHROPIC_API_KEY GEMINI_API_KEY MASSGEN_ATTACK_SECRET",
		"export -p":                   "export -p",
		"/proc/1/environ":             "cat /proc/1/environ",
		"/proc/self/environ":          "cat /proc/self/environ",
		"/proc/$PPID/environ":         "cat /proc/$PPID/environ",
		"every /proc/*/environ":       "for f in /proc/*/environ /proc/*/task/*/environ; do cat $f; echo; done",
		"/proc/1/cmdline":             "cat /proc/1/cmdline",
		"every /proc/*/cmdline":       "for f in /proc/*/cmdline; do cat $f; echo; done",
		"python os.environ":           "python3 -c 'import os; print(dict(os.environ))'",
		"ps eww":                      "ps eww -e",
		"/proc/1/root/proc/1/environ": "cat /proc/1/root/proc/1/environ",
	}
	for _, via := range vias {
		for name, cmd := range attacks {
			if via == "mcp-start" && !strings.Contains(name, "environ") && name != "env" {
				continue // the server's own start: the environ attacks
			}
			attempt(t, via+": "+name, func(t *testing.T) {
				t.Parallel()
				dir := tempDir(t)
				out, ran, r := probe(t, dir, via, cmd, team{})
				if ran && strings.Contains(out, canary) {
					t.Errorf("%s printed a key:\n%s", cmd, excerpt(out, canary))
				}
				noCanary(t, r)
			})
		}
	}
	// The MCP server's own env is its own: a variable the config gives it
	// arrives, the keys of massgen do not.
	attempt(t, "mcp: a server with its own env gets only that", func(t *testing.T) {
		t.Parallel()
		dir := tempDir(t)
		s := team{mcp: evilServer("env > out.txt; echo ran > ran.txt")}
		s.mcp["evil"].(map[string]any)["env"] = map[string]string{"MY_SETTING": "visible"}
		s.coord = []call{mcpRun("true")}
		r := runTeam(t, dir, s, runOpts{})
		out, _ := wsFile(dir, "out.txt")
		if !strings.Contains(out, "MY_SETTING=visible") {
			t.Logf("the server's env did not arrive (out %q):\n%s", out, r)
		}
		noCanary(t, r)
	})
}

// hostLines are the lines of a host file worth looking for (8+ bytes).
func hostLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); len(l) >= 8 {
			out = append(out, l)
		}
	}
	return out
}

// Class 7: host secrets stay out of the sandbox.
func TestHostSecrets(t *testing.T) {
	needBwrap(t)
	needPython(t)
	home, _ := os.UserHomeDir()
	var homeNames []string // what is in the user's home, beside Python's installation
	if ents, err := os.ReadDir(home); err == nil {
		for _, e := range ents {
			if e.Name() != ".pyenv" {
				homeNames = append(homeNames, e.Name())
			}
		}
	}
	var homeFiles []string
	for _, n := range []string{".gitconfig", ".npmrc", ".bashrc", ".profile", ".netrc", ".ssh/id_rsa", ".ssh/id_ed25519", ".config/gh/hosts.yml", ".docker/config.json", ".claude/.credentials.json", ".aws/credentials"} {
		if _, err := os.Stat(filepath.Join(home, n)); err == nil {
			homeFiles = append(homeFiles, filepath.Join(home, n))
		}
	}
	type secretAttack struct {
		cmd     string
		files   []string // host files whose lines must not show
		needles []string // nor these strings
	}
	sslKeys, _ := filepath.Glob("/etc/ssl/private/*")
	machineID := strings.TrimSpace(string(must1(os.ReadFile("/etc/machine-id"))))
	attacks := map[string]secretAttack{
		"/etc/shadow":             {cmd: "cat /etc/shadow /etc/shadow-", files: []string{"/etc/shadow", "/etc/shadow-"}},
		"/etc/gshadow":            {cmd: "cat /etc/gshadow /etc/gshadow-", files: []string{"/etc/gshadow", "/etc/gshadow-"}},
		"/etc/ssl/private":        {cmd: "ls -la /etc/ssl/private; cat /etc/ssl/private/*", files: sslKeys, needles: baseNames(sslKeys)},
		"/etc/machine-id":         {cmd: "cat /etc/machine-id /var/lib/dbus/machine-id", needles: []string{machineID}},
		"the user's home listed":  {cmd: "ls -la " + home + "; ls -la " + home + "/.ssh", needles: homeNames},
		"the user's home read":    {cmd: "cat " + strings.Join(homeFiles, " "), files: homeFiles},
		"/root/.ssh":              {cmd: "ls -la /root/.ssh; cat /root/.ssh/*", files: globs("/root/.ssh/*")},
		"/proc/1/root":            {cmd: "cat /proc/1/root/etc/shadow; ls -la /proc/1/root" + home, files: []string{"/etc/shadow"}, needles: homeNames},
		"/proc/self/root":         {cmd: "cat /proc/self/root/etc/shadow; ls /proc/self/root" + home, files: []string{"/etc/shadow"}, needles: homeNames},
		"/sys":                    {cmd: "cat /sys/class/net/*/address; cat /sys/class/dmi/id/product_uuid /sys/class/dmi/id/board_serial", needles: sysNeedles()},
		"/var/run/docker.sock":    {cmd: "ls -la /var/run/docker.sock /run/docker.sock; curl -s --max-time 3 --unix-socket /var/run/docker.sock http://x/version", needles: []string{"ApiVersion"}},
		"mountinfo sources":       {cmd: "cat /proc/self/mountinfo; for m in $(awk '{print $5}' /proc/self/mountinfo); do find \"$m\" -maxdepth 3 -name 'secret*' -type f -exec cat {} + 2>/dev/null; done"},
		"find the outside secret": {cmd: "find / -name 'secret*' -type f -exec cat {} + 2>/dev/null; cat ../../../../outside/secret.txt"},
		"python open outside":     {cmd: "python3 -c \"import glob; [print(open(f).read()) for f in glob.glob('/tmp/**/outside/secret.txt', recursive=True)]\""},
	}
	for _, via := range []string{"cmd", "mcp"} {
		for name, a := range attacks {
			attempt(t, via+": "+name, func(t *testing.T) {
				t.Parallel()
				dir := tempDir(t)
				// A secret outside everything the agent is given.
				writeFiles(t, dir, map[string]string{"outside/secret.txt": "outside " + canary})
				out, ran, r := probe(t, dir, via, a.cmd, team{})
				t.Logf("output: %s", tail(out, 800))
				if ran {
					for _, f := range a.files {
						for _, l := range hostLines(f) {
							if strings.Contains(out, l) {
								t.Errorf("%s: the host's %s shows: %q", a.cmd, f, l)
								break
							}
						}
					}
					// What the tools say they could not find names it too
					// ("ls: cannot access '/root/.ssh'"): that is no leak.
					seen := withoutNotFound(out)
					for _, n := range a.needles {
						if n != "" && strings.Contains(seen, n) {
							t.Errorf("%s: %q shows:\n%s", a.cmd, n, excerpt(seen, n))
						}
					}
				}
				noCanary(t, r)
			})
		}
	}
}

func must1[T any](v T, _ error) T { return v }

func globs(p string) []string { m, _ := filepath.Glob(p); return m }

func baseNames(ps []string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, filepath.Base(p))
	}
	return out
}

func sysNeedles() []string {
	var out []string
	for _, p := range append(globs("/sys/class/net/*/address"), "/sys/class/dmi/id/product_uuid", "/sys/class/dmi/id/board_serial") {
		if b, err := os.ReadFile(p); err == nil {
			if s := strings.TrimSpace(string(b)); s != "" && s != "00:00:00:00:00:00" {
				out = append(out, s)
			}
		}
	}
	return out
}

// listener counts the connections a socket of the host gets.
type listener struct {
	ln    net.Listener
	conns atomic.Int32
}

func listen(t *testing.T, network, addr string) *listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	must(t, err)
	l := &listener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.conns.Add(1)
			c.Write([]byte("HOST-SOCKET-ANSWER\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return l
}

// Class 6: with no network, a command reaches no socket of the host: a
// unix socket listening in a read-only context path, a TCP listener on
// the host's 127.0.0.1, an abstract unix socket of the host.
func TestSockets(t *testing.T) {
	needBwrap(t)
	needPython(t)
	pyConnect := func(family, addr string) string {
		return fmt.Sprintf(`python3 -c "import socket; s=socket.socket(socket.%s); s.settimeout(3); s.connect(%s); print('connected', s.recv(100))"`, family, addr)
	}
	type sockAttack struct {
		network string
		cmd     func(addr string) string
		vias    []string
	}
	attacks := map[string]sockAttack{
		"unix socket in a read-only context path (python)": {"unix", func(a string) string { return pyConnect("AF_UNIX", "'"+a+"'") }, []string{"cmd", "mcp"}},
		"unix socket in a read-only context path (curl)":   {"unix", func(a string) string { return "curl -s --max-time 3 --unix-socket " + a + " http://x/" }, []string{"cmd", "mcp"}},
		"unix socket through a symlink in the workspace":   {"unix", func(a string) string { return "ln -s " + a + " s.sock && " + pyConnect("AF_UNIX", "'s.sock'") }, []string{"cmd", "mcp"}},
		"TCP to the host's 127.0.0.1 (python)":             {"tcp", func(a string) string { h, p, _ := net.SplitHostPort(a); return pyConnect("AF_INET", "('"+h+"',"+p+")") }, []string{"cmd"}},
		"TCP to the host's 127.0.0.1 (curl)":               {"tcp", func(a string) string { return "curl -s --max-time 3 http://" + a + "/" }, []string{"cmd"}},
		"TCP to the host's 127.0.0.1 (bash /dev/tcp)": {"tcp", func(a string) string {
			h, p, _ := net.SplitHostPort(a)
			return "bash -c 'exec 3<>/dev/tcp/" + h + "/" + p + " && echo connected && cat <&3'"
		}, []string{"cmd"}},
		"abstract unix socket of the host": {"abstract", func(a string) string { return pyConnect("AF_UNIX", "'\\0"+a+"'") }, []string{"cmd", "mcp"}},
	}
	for name, a := range attacks {
		for _, via := range a.vias {
			attempt(t, via+": "+name, func(t *testing.T) {
				t.Parallel()
				dir := tempDir(t)
				ctx := filepath.Join(dir, "ctx")
				writeFiles(t, dir, map[string]string{"ctx/readme.txt": "a read-only context path"})
				var l *listener
				var addr string
				switch a.network {
				case "unix":
					addr = filepath.Join(ctx, "s.sock")
					l = listen(t, "unix", addr)
				case "tcp":
					l = listen(t, "tcp", "127.0.0.1:0")
					addr = l.ln.Addr().String()
				case "abstract":
					addr = "massgen-attack-" + canary[6:14] + "-" + fmt.Sprint(time.Now().UnixNano())
					l = listen(t, "unix", "@"+addr)
				}
				out, ran, r := probe(t, dir, via, a.cmd(addr), team{contexts: []map[string]any{{"path": ctx, "permission": "read"}}})
				t.Logf("ran %v, output: %s", ran, tail(out, 500))
				if n := l.conns.Load(); n > 0 {
					t.Errorf("the host's %s socket %s got %d connection(s); output: %s", a.network, addr, n, out)
				}
				if strings.Contains(out, "HOST-SOCKET-ANSWER") {
					t.Errorf("the command read the host socket's answer")
				}
				noCanary(t, r)
			})
		}
	}
}

// withoutNotFound drops the lines in which a command says a path does not
// exist: they quote the path the attack asked for, not what it found.
func withoutNotFound(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "No such file or directory") { // not "Permission denied": that says it exists
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}
