package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/massgen/massgen/internal/workspace"
	"github.com/massgen/massgen/internal/workspace/sandbox"
	"github.com/massgen/massgen/internal/workspace/sandbox/dockertest"
	"github.com/massgen/massgen/internal/workspace/wstest"
)

// dockerRunner is a docker-mode runner over w's guard in the test image,
// whose container goes when the test ends.
func (w *world) dockerRunner(t testing.TB, cfg sandbox.Config) *sandbox.Runner {
	t.Helper()
	cfg.Mode = "docker"
	if cfg.Docker.Image == "" {
		cfg.Docker.Image = dockertest.Image(t)
	}
	r := w.runner(t, cfg)
	if err := r.Disabled(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// gone reports whether the engine has no container id.
func gone(t *testing.T, cli *client.Client, id string) bool {
	_, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	return err != nil
}

// TestDockerCommandsCannotWriteOutside: the attempts of the bubblewrap
// test, run for real in a container; outside the workspace the host's
// tree is the same afterwards.
func TestDockerCommandsCannotWriteOutside(t *testing.T) {
	w := newWorld(t)
	r := w.dockerRunner(t, sandbox.Config{})
	attempts := append(w.escapes(),
		"cat "+filepath.Join(w.other, "live.txt")+" && echo x > "+filepath.Join(w.other, "live.txt"),
		"ln -s / root && echo x > root"+filepath.Join(w.outside, "secret.txt"),
		"mount -t tmpfs none "+w.proj+" && echo x > "+filepath.Join(w.proj, "main.go"),
		"echo x > /proc/1/root"+filepath.Join(w.outside, "secret.txt"),
	)
	tried, passed := 0, 0
	for _, a := range attempts {
		t.Run(a, func(t *testing.T) {
			before := wstest.Snapshot(t, w.base)
			outsideWS := func(tr wstest.Tree) string {
				var out []string
				for _, l := range tr {
					if !strings.Contains(l, " ws") {
						out = append(out, l)
					}
				}
				return strings.Join(out, "\n")
			}
			res := run(t, r, a)
			t.Logf("exit %d: %s", res.ExitCode, strings.TrimSpace(res.Output))
			tried++
			if outsideWS(before) != outsideWS(wstest.Snapshot(t, w.base)) {
				passed++
				t.Errorf("%q changed the disk outside the workspace", a)
			}
			if strings.Contains(res.Output, "b-live") || slices.Contains(strings.Split(res.Output, "\n"), "secret") {
				passed++
				t.Errorf("%q read what it was not given: %s", a, res.Output)
			}
		})
	}
	t.Logf("%d attempts in a container, %d passed", tried, passed)
	// A symlink a command made is still refused to the file tools.
	before := wstest.Snapshot(t, w.outside)
	if _, _, err := w.g.WriteFile("link", []byte("x")); err == nil {
		t.Errorf("write through a command's symlink was allowed")
	}
	wstest.Unchanged(t, w.outside, before)
}

// TestDockerCommandView: the command runs in the configured image (not on
// the host), in the workspace at its own path, as the host's user with no
// capability, with only its own environment, a fresh /tmp and no network.
func TestDockerCommandView(t *testing.T) {
	w := newWorld(t)
	t.Setenv("MASSGEN_TEST_SECRET", "hunter2")
	r := w.dockerRunner(t, sandbox.Config{Env: []string{"EXTRA=1"}})
	res := run(t, r, "pwd; cat mine.txt; cat "+filepath.Join(w.snap, "answer.txt")+"; echo made > made.txt; env; id -u; "+
		"grep CapEff /proc/self/status; ls /tmp | wc -l; test -e /usr/bin/apt-get && echo HOST-FS")
	for _, want := range []string{w.ws + "\n", "mine", "b-snap", "EXTRA=1", "HOME=/tmp", "\n" + strconv.Itoa(os.Getuid()) + "\n",
		"CapEff:\t0000000000000000"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output %q lacks %q", res.Output, want)
		}
	}
	if strings.Contains(res.Output, "hunter2") {
		t.Errorf("massgen's environment leaked into the container: %s", res.Output)
	}
	if strings.Contains(res.Output, "HOST-FS") {
		t.Errorf("the command saw the host's /usr, not the image's: %s", res.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "made.txt")); string(b) != "made\n" {
		t.Errorf("the command's file in the workspace: %q", b)
	}
	if fi, err := os.Stat(filepath.Join(w.ws, "made.txt")); err == nil {
		if uid := statUID(fi); uid != os.Getuid() {
			t.Errorf("made.txt belongs to uid %d, not the user's %d", uid, os.Getuid())
		}
	}
	res = run(t, r, "cat /proc/net/dev")
	if n := strings.Count(res.Output, ":"); n != 1 || !strings.Contains(res.Output, "lo:") {
		t.Errorf("network interfaces in the container: %s", res.Output)
	}
	// The same container serves the agent's next command.
	id := r.Container()
	run(t, r, "true")
	if r.Container() != id || id == "" {
		t.Errorf("the container changed between commands: %q then %q", id, r.Container())
	}
}

func TestDockerPresenterWritesContextNotProtected(t *testing.T) {
	w := newWorld(t)
	r := w.dockerRunner(t, sandbox.Config{})
	res := run(t, r, "echo early > "+filepath.Join(w.proj, "main.go"))
	if b, _ := os.ReadFile(filepath.Join(w.proj, "main.go")); string(b) != "package main" || res.ExitCode == 0 {
		t.Errorf("a context write before the presentation: %q (exit %d: %s)", b, res.ExitCode, res.Output)
	}
	first := r.Container()
	w.g.SetFinalPresentation(true)
	res = run(t, r, "echo v2 > "+filepath.Join(w.proj, "main.go")+" && echo x > "+filepath.Join(w.proj, ".env"))
	if b, _ := os.ReadFile(filepath.Join(w.proj, "main.go")); string(b) != "v2\n" {
		t.Errorf("the presenter's context write: %q (%s)", b, res.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, ".env")); string(b) != "TOKEN=x" || res.ExitCode == 0 {
		t.Errorf("the protected file: %q (exit %d)", b, res.ExitCode)
	}
	if r.Container() == first {
		t.Errorf("the container was not made anew with the presentation's mounts")
	}
	cli := dockertest.Engine(t)
	if !gone(t, cli, first) {
		t.Errorf("the coordination-phase container %s is still there", first)
	}
}

func TestDockerTimeoutKillsAndRecovers(t *testing.T) {
	w := newWorld(t)
	r := w.dockerRunner(t, sandbox.Config{Timeout: 2 * time.Second, MaxOutput: 1000})
	run(t, r, "true")
	first := r.Container()
	res := run(t, r, "sleep 600 & sleep 600")
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	cli := dockertest.Engine(t)
	if !gone(t, cli, first) {
		t.Errorf("the timed-out command's container %s is still there", first)
	}
	res = run(t, r, "echo again; head -c 100000 /dev/zero | tr '\\0' a")
	if !strings.HasPrefix(res.Output, "again\n") || len(res.Output) != 1000 || res.Truncated != 100006-1000 {
		t.Errorf("after the timeout: %d bytes, %d dropped: %.40q", len(res.Output), res.Truncated, res.Output)
	}
}

// TestDockerNetworkModes: none (the default) cannot reach a server on the
// host's loopback; host can.
func TestDockerNetworkModes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "reached") })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	fetch := `printf 'GET / HTTP/1.0\r\n\r\n' | nc ` + host + " " + port
	w := newWorld(t)
	if res := run(t, w.dockerRunner(t, sandbox.Config{}), fetch); strings.Contains(res.Output, "reached") || res.ExitCode == 0 {
		t.Errorf("network none reached the host: %+v", res)
	}
	if res := run(t, w.dockerRunner(t, sandbox.Config{Docker: sandbox.Docker{Network: "host"}}), fetch); !strings.Contains(res.Output, "reached") {
		t.Errorf("network host did not reach the host's server: %+v", res)
	}
}

// TestDockerLimitsCredentialsPackages: the container is made with the
// configured limits, shares the named credentials read-only and the named
// variables, and has its packages installed before the first command.
func TestDockerLimitsCredentialsPackages(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Tester\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_TOKEN", "gh-test-token")
	t.Setenv("OPENAI_API_KEY", "sk-not-shared")
	w := newWorld(t)
	r := w.dockerRunner(t, sandbox.Config{Docker: sandbox.Docker{Memory: 256 << 20, CPUs: 0.5,
		Credentials: sandbox.Credentials{Files: []string{".gitconfig", ".ssh"}, EnvVars: []string{"GITHUB_TOKEN", "MISSING_VAR"}},
		Packages: sandbox.Packages{System: []string{"jq"}, Python: []string{"requests==2.32.3", "rich"},
			NPM: []string{"typescript@5.9.3"}}}})
	if ws := strings.Join(r.Warnings(), "\n"); !strings.Contains(ws, ".ssh does not exist") || !strings.Contains(ws, "MISSING_VAR is not set") {
		t.Errorf("warnings %q", ws)
	}
	res := run(t, r, "cat ~/.gitconfig; echo token=$GITHUB_TOKEN; echo key=$OPENAI_API_KEY; cat /var/log/installs; echo x >> ~/.gitconfig")
	installs := "apt-get update -qq\napt-get install -y -qq jq\npip install -q requests==2.32.3 rich\nnpm install -g --silent typescript@5.9.3\n"
	for _, want := range []string{"name = Tester", "token=gh-test-token", "key=\n", installs} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output %q lacks %q", res.Output, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".gitconfig")); string(b) != "[user]\n\tname = Tester\n" {
		t.Errorf("the shared credential changed: %q", b)
	}
	ins, err := dockertest.Engine(t).ContainerInspect(context.Background(), r.Container(), client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := ins.Container.HostConfig
	if hc.Memory != 256<<20 || hc.NanoCPUs != 5e8 || hc.PidsLimit == nil || *hc.PidsLimit <= 0 {
		t.Errorf("limits: memory %d, nano CPUs %d, pids %v", hc.Memory, hc.NanoCPUs, hc.PidsLimit)
	}
	// A package that cannot be installed fails the command, saying which.
	w2 := newWorld(t)
	r2 := w2.dockerRunner(t, sandbox.Config{Docker: sandbox.Docker{Packages: sandbox.Packages{Python: []string{"broken"}}}})
	if _, err := r2.Run(context.Background(), "true", ""); err == nil || !strings.Contains(err.Error(), "command_line_docker_packages python") ||
		!strings.Contains(err.Error(), "No matching distribution found for broken") {
		t.Errorf("a failed install: %v", err)
	}
}

// TestDockerSudo: with command_line_docker_enable_sudo the command keeps
// the engine's default capabilities (it may install system packages in
// the container); without it, it has none (TestDockerCommandView).
func TestDockerSudo(t *testing.T) {
	w := newWorld(t)
	r := w.dockerRunner(t, sandbox.Config{Docker: sandbox.Docker{Sudo: true}})
	res := run(t, r, "id -u; grep CapEff /proc/self/status; echo ok > /etc/installed && cat /etc/installed")
	if !strings.HasPrefix(res.Output, "0\n") || strings.Contains(res.Output, "CapEff:\t0000000000000000") || !strings.Contains(res.Output, "ok") {
		t.Errorf("with sudo: %s", res.Output)
	}
}

func TestDockerWithoutEngineOrImage(t *testing.T) {
	w := newWorld(t)
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no.sock"))
	r := w.runner(t, sandbox.Config{Mode: "docker"})
	err := r.Disabled()
	if err == nil || !strings.Contains(err.Error(), "docker is not available here: no Docker engine answers at unix://") ||
		!strings.Contains(err.Error(), "command_line_execution_mode: local") {
		t.Fatalf("without an engine: %v", err)
	}
	if _, err := r.Run(context.Background(), "true", ""); err == nil {
		t.Errorf("a command ran without an engine")
	}
	// An engine on another machine would bind its own paths, not these.
	t.Setenv("DOCKER_HOST", "tcp://192.0.2.1:2375")
	if err := w.runner(t, sandbox.Config{Mode: "docker"}).Disabled(); err == nil || !strings.Contains(err.Error(), "needs a Docker engine on this machine") {
		t.Errorf("a remote engine: %v", err)
	}
	os.Unsetenv("DOCKER_HOST")
	dockertest.Engine(t)
	r = w.runner(t, sandbox.Config{Mode: "docker", Docker: sandbox.Docker{Image: "massgen-test/not-here:0"}})
	t.Cleanup(r.Close)
	if ws := strings.Join(r.Warnings(), "\n"); !strings.Contains(ws, "massgen-test/not-here:0 is not on the engine; pulling it") {
		t.Errorf("warnings %q", ws)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := r.Run(ctx, "true", ""); err == nil || !strings.Contains(err.Error(), "cannot be pulled") {
		t.Errorf("an image that cannot be pulled: %v", err)
	}
}

// TestDockerContainerGoesWithAKilledMassgen: a process holding a container
// is killed with SIGKILL; the engine removes the container by itself.
func TestDockerContainerGoesWithAKilledMassgen(t *testing.T) {
	if os.Getenv("MASSGEN_DOCKER_HOLDER") != "" {
		holdContainer(t)
		return
	}
	image := dockertest.Image(t)
	cli := dockertest.Engine(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDockerContainerGoesWithAKilledMassgen$", "-test.v")
	cmd.Env = append(os.Environ(), "MASSGEN_DOCKER_HOLDER="+image)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	buf := make([]byte, 4096)
	var seen strings.Builder
	for id == "" {
		n, err := out.Read(buf)
		seen.Write(buf[:n])
		if i := strings.Index(seen.String(), "container="); i >= 0 && strings.Contains(seen.String()[i:], "\n") {
			id = strings.TrimSpace(strings.SplitN(seen.String()[i+len("container="):], "\n", 2)[0])
		}
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the holder ended before it held a container: %s", seen.String())
		}
	}
	if gone(t, cli, id) {
		t.Fatalf("container %s is not there while its holder lives", id)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(60 * time.Second)
	for !gone(t, cli, id) {
		if time.Now().After(deadline) {
			cli.ContainerRemove(context.Background(), id, client.ContainerRemoveOptions{Force: true})
			t.Fatalf("container %s outlived its killed holder by 60 s", id)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// holdContainer is the child of TestDockerContainerGoesWithAKilledMassgen:
// it runs one command, says which container, and waits to be killed.
func holdContainer(t *testing.T) {
	w := newWorld(t)
	r := w.runner(t, sandbox.Config{Mode: "docker", Docker: sandbox.Docker{Image: os.Getenv("MASSGEN_DOCKER_HOLDER")}})
	if _, err := r.Run(context.Background(), "true", ""); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("container=%s\n", r.Container())
	time.Sleep(5 * time.Minute)
}

func TestDockerCloseRemovesTheContainer(t *testing.T) {
	w := newWorld(t)
	r := w.dockerRunner(t, sandbox.Config{})
	run(t, r, "true")
	id := r.Container()
	r.Close()
	if !gone(t, dockertest.Engine(t), id) {
		t.Errorf("container %s is still there after Close", id)
	}
}

// TestDockerContainerKilledDuringACommand: the container dies under a
// running command (as by the out-of-memory killer); the command fails
// saying so, is not run again, and the next command gets a new container.
func TestDockerContainerKilledDuringACommand(t *testing.T) {
	w := newWorld(t)
	r := w.dockerRunner(t, sandbox.Config{})
	run(t, r, "true")
	id := r.Container()
	cli := dockertest.Engine(t)
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(context.Background(), "echo ran >> count.txt; sleep 30", "")
		done <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(w.ws, "count.txt")); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
	}
	if _, err := cli.ContainerKill(context.Background(), id, client.ContainerKillOptions{}); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "stopped while the command ran") {
		t.Errorf("a command whose container died: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "count.txt")); string(b) != "ran\n" {
		t.Errorf("the command ran %q times", b)
	}
	if res := run(t, r, "echo again"); res.Output != "again\n" || r.Container() == id {
		t.Errorf("after the container died: %+v in %s", res, r.Container())
	}
}

// TestDockerPullRunsInTheBackground: an image the engine lacks is pulled
// from the start, not within one command's time: a command that cannot
// wait for it says it is still being pulled, and Close stops the pull.
// The registry is a local one that never answers.
func TestDockerPullRunsInTheBackground(t *testing.T) {
	dockertest.Engine(t)
	release := make(chan struct{})
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer reg.Close()
	defer close(release)
	image := strings.TrimPrefix(reg.URL, "http://") + "/massgen/slow:1"
	w := newWorld(t)
	r := w.runner(t, sandbox.Config{Mode: "docker", Docker: sandbox.Docker{Image: image}})
	if ws := strings.Join(r.Warnings(), "\n"); !strings.Contains(ws, "pulling it") {
		t.Errorf("warnings %q", ws)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := r.Run(ctx, "true", ""); err == nil || !strings.Contains(err.Error(), "is still being pulled") {
		t.Errorf("a command while the image is pulled: %v", err)
	}
	r.Close() // must not wait for the registry
}

// Finding 6 in docker mode: with network mode none, a socket file in a
// context path the container sees read-only must not reach the host's
// service. The client is a static Go program dropped in the workspace
// (the test image has no language runtime).
func TestDockerNoUnixSocketToTheHostWithoutNetwork(t *testing.T) {
	w := newWorld(t)
	sock := filepath.Join(w.proj, "svc.sock")
	hostService(t, sock, "HOST-ANSWER")
	src := filepath.Join(t.TempDir(), "dial.go")
	os.WriteFile(src, []byte(`package main

import ("fmt"; "net"; "os")

func main() {
	c, err := net.Dial("unix", os.Args[1])
	if err != nil { fmt.Println("refused:", err); return }
	b := make([]byte, 20); n, _ := c.Read(b); fmt.Printf("%s", b[:n])
}
`), 0o644)
	build := exec.Command("go", "build", "-o", filepath.Join(w.ws, "dial"), src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the client: %v: %s", err, out)
	}
	r := w.dockerRunner(t, sandbox.Config{})
	if res := run(t, r, "./dial "+sock); strings.Contains(res.Output, "HOST-ANSWER") || !strings.Contains(res.Output, "refused") {
		t.Errorf("the container reached the host's socket: %+v", res)
	}
	// With a network the user allowed, the socket answers (the profile is
	// what refused it, not the mount).
	rn := w.dockerRunner(t, sandbox.Config{Docker: sandbox.Docker{Network: "bridge"}})
	if res := run(t, rn, "./dial "+sock); !strings.Contains(res.Output, "HOST-ANSWER") {
		t.Errorf("with network mode bridge the socket should answer: %+v", res)
	}
}

// The workspace size limit in docker mode: the workspace is the host's
// directory, watched while the command runs; one that fills it is
// stopped with its container.
func TestDockerCommandFillingTheWorkspaceIsStopped(t *testing.T) {
	w := newWorld(t)
	g, err := workspace.New(workspace.Policy{Agent: "agent_a", Workspace: w.ws, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.New(g, sandbox.Config{Mode: "docker", Docker: sandbox.Docker{Image: dockertest.Image(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Disabled(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	res := run(t, r, "i=0; while [ $i -lt 200 ]; do head -c 100000 /dev/zero > m$i; i=$((i+1)); sleep 0.02; done; echo finished")
	if strings.Contains(res.Output, "finished") || !strings.Contains(res.Note, "workspace_max_size_mb") {
		t.Errorf("a command filling the workspace ran to its end: %+v", res)
	}
	if used := g.Usage(); used > 4<<20 {
		t.Errorf("the workspace holds %d bytes, far past its 1 MiB limit", used)
	}
}
