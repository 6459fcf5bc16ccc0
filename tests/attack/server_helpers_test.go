package attack

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// daemon is a long-running massgen (serve, mcp --http) and what it printed.
type daemon struct {
	cmd    *exec.Cmd
	addr   string // host:port it listens on
	token  string // a bearer token it printed, if any
	stderr *syncBuilder
}

// syncBuilder is a daemon's output, written by its reader goroutine while
// a test reads it, and the first token seen in it.
type syncBuilder struct {
	mu    sync.Mutex
	b     strings.Builder
	token string
}

func (s *syncBuilder) WriteString(l string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(l)
	if m := tokenRE.FindStringSubmatch(l); m != nil && s.token == "" {
		s.token = m[1]
	}
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuilder) firstToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
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
	d := &daemon{cmd: cmd, stderr: &syncBuilder{}}
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := false
		for sc.Scan() {
			l := sc.Text()
			d.stderr.WriteString(l + "\n")
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
	d.token = d.stderr.firstToken()
	return d
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
