package attack

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemon is a long-running massgen (serve, mcp --http) and what it printed.
type daemon struct {
	cmd    *exec.Cmd
	addr   string // host:port it listens on
	token  string // a bearer token it printed, if any
	stderr *strings.Builder
}

var listenRE = regexp.MustCompile(`listening on http://([0-9.:\[\]a-z]+)`)
var tokenRE = regexp.MustCompile(`(?i)(?:bearer|token)[ :=]+([A-Za-z0-9._~+/=-]{16,})`)

// startDaemon runs massgen with args in dir until t ends; it waits for
// the "listening on" line.
func startDaemon(t *testing.T, dir string, env []string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	cmd.Stdout = pw
	must(t, cmd.Start())
	d := &daemon{cmd: cmd, stderr: &strings.Builder{}}
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := false
		for sc.Scan() {
			l := sc.Text()
			d.stderr.WriteString(l + "\n")
			if m := tokenRE.FindStringSubmatch(l); m != nil && d.token == "" {
				d.token = m[1]
			}
			if m := listenRE.FindStringSubmatch(l); m != nil && !once {
				once = true
				d.addr = strings.TrimSuffix(m[1], "/mcp")
				close(found)
			}
		}
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		pw.Close()
	})
	select {
	case <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("massgen %v did not start listening:\n%s", args, d.stderr)
	}
	time.Sleep(100 * time.Millisecond) // a token printed after the address
	return d
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
