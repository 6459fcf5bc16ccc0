package attack

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
)

// Docker mode (command_line_execution_mode: docker) under the same promise
// as bubblewrap: with network mode none a socket file among the mounts
// reaches no host service (the container's seccomp profile has no unix
// sockets), and a command that fills the workspace is stopped by its size
// limit. The image is dockertest's busybox; the socket client is a static
// Go program left in the read-only context path.
func TestDockerMode(t *testing.T) {
	image := dockertest.Image(t)
	dockerTeam := func(s team, extra map[string]any) team {
		s.backend = map[string]any{"command_line_execution_mode": "docker", "command_line_docker_image": image}
		for k, v := range extra {
			s.backend[k] = v
		}
		return s
	}
	attempt(t, "docker: a host service's socket in a read-only context path", func(t *testing.T) {
		dir := tempDir(t)
		proj := filepath.Join(dir, "proj")
		must(t, os.MkdirAll(proj, 0o755))
		sock := filepath.Join(proj, "svc.sock")
		l, err := net.Listen("unix", sock)
		must(t, err)
		t.Cleanup(func() { l.Close() })
		os.Chmod(sock, 0o777)
		var accepted atomic.Int32
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Write([]byte("HOST-SOCKET-ANSWER\n"))
				c.Close()
			}
		}()
		src := filepath.Join(t.TempDir(), "dial.go")
		must(t, os.WriteFile(src, []byte("package main\n\nimport (\"fmt\"; \"net\"; \"os\")\n\nfunc main() {\n"+
			"\tc, err := net.Dial(\"unix\", os.Args[1])\n\tif err != nil { fmt.Println(\"dial refused:\", err); return }\n"+
			"\tb := make([]byte, 40); n, _ := c.Read(b); fmt.Printf(\"%s\", b[:n])\n}\n"), 0o644))
		code := filepath.Join(proj, "src") // fingerprinted; the socket is beside it
		writeFiles(t, code, map[string]string{"main.go": "package main\n"})
		build := exec.Command("go", "build", "-o", filepath.Join(code, "dial"), src)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building the client: %v: %s", err, out)
		}
		before := snap(t, code)
		s := dockerTeam(team{coord: []call{sh(filepath.Join(code, "dial") + " " + sock)},
			contexts: []map[string]any{{"path": proj, "permission": "read"}}}, nil)
		r := runTeam(t, dir, s, runOpts{})
		if n := accepted.Load(); n != 0 {
			t.Errorf("the host's service accepted %d connections from the container:\n%s", n, r)
		}
		if hits := grepTree(dir, "HOST-SOCKET-ANSWER"); len(hits) > 0 || strings.Contains(r.stdout+r.stderr, "HOST-SOCKET-ANSWER") {
			t.Errorf("the service's answer reached the run: %v", hits)
		}
		if len(grepTree(dir, "dial refused")) == 0 {
			t.Logf("the attempt may not have run:\n%s", r)
		}
		unchanged(t, "the context path", code, before)
		noCanary(t, r)
	})
	attempt(t, "docker: many small files past the workspace limit", func(t *testing.T) {
		dir := tempDir(t)
		s := dockerTeam(team{coord: []call{sh("i=0; while [ $i -lt 300 ]; do head -c 100000 /dev/zero > m$i; i=$((i+1)); sleep 0.01; done; echo finished")}},
			map[string]any{"workspace_max_size_mb": 1})
		r := runTeam(t, dir, s, runOpts{})
		ws := workspaceOf(dir)
		if ws == "" {
			t.Fatalf("no workspace:\n%s", r)
		}
		if used := diskUsage(ws); used > 8<<20 {
			t.Errorf("the workspace holds %d MiB past its 1 MiB limit", used>>20)
		}
		if len(grepTree(filepath.Join(dir, "logs"), "workspace_max_size_mb")) == 0 {
			t.Errorf("the model was not told why its command stopped:\n%s", r)
		}
		noCanary(t, r)
	})
}
