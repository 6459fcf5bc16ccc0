package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pidOf is the process id of a started stdio server.
func pidOf(t *testing.T, h Handle) string {
	t.Helper()
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.s.conn == nil || h.s.conn.cmd == nil || h.s.conn.cmd.Process == nil {
		t.Fatalf("server %s has no process", h.s.cfg.Name)
	}
	return itoa(h.s.conn.cmd.Process.Pid)
}

// CloseOwner stops one agent's servers (their processes are gone, their
// tools say they are stopped, their stderr logs stay for CopyLogs) and
// leaves the rest of the pool running: another agent's server and a
// shared one still answer, and the same config added again for the owner
// is a new process that answers too. Close takes everything.
func TestCloseOwnerStopsOnlyThatAgentsServers(t *testing.T) {
	logs := t.TempDir()
	// Each writes its stderr log as it starts, so that the logs have
	// something to be copied.
	srv := func(owner string) Server {
		name := "everything"
		if owner == "" {
			name = "shared"
		}
		return Server{Name: name, Command: "sh", Owner: owner,
			Args: []string{"-c", `echo "up for $0" >&2; exec ` + npmBin(t, "mcp-server-everything") + ` stdio`, "owner-" + owner}}
	}
	p, hs := started(t, Options{LogDir: logs}, srv("a"), srv("b"), srv(""))
	a, b, shared := hs[0], hs[1], hs[2]
	setA := toolsOf(t, p.Tools("a", []Handle{a}, nil, nil))
	setB := toolsOf(t, p.Tools("b", []Handle{b, shared}, nil, nil))
	pidA, pidB, pidShared := pidOf(t, a), pidOf(t, b), pidOf(t, shared)

	p.CloseOwner("a")
	if err := gone(pidA); err != nil {
		t.Fatalf("a's server after CloseOwner(a): %v", err)
	}
	if !alive(pidB) || !alive(pidShared) {
		t.Fatalf("CloseOwner(a) took others: b's alive %v, the shared one alive %v", alive(pidB), alive(pidShared))
	}
	if got := call(t, setA, "mcp__everything__echo", `{"message":"still there?"}`); !got.IsError || !strings.Contains(got.Content, "stopped") {
		t.Errorf("a's tool after CloseOwner(a) = %+v, want an error saying its server is stopped", got)
	}
	if got := call(t, setB, "mcp__everything__echo", `{"message":"b here"}`); got.IsError || !strings.Contains(got.Content, "b here") {
		t.Errorf("b's tool after CloseOwner(a) = %+v", got)
	}
	p.CloseOwner("") // the shared servers are no one's to stop
	if !alive(pidShared) {
		t.Error(`CloseOwner("") stopped the shared server`)
	}

	// The owner's server added again is a new process, with a log of its own.
	again, err := p.Add(srv("a"))
	if err != nil {
		t.Fatal(err)
	}
	if again == a {
		t.Fatal("Add after CloseOwner returned the stopped server")
	}
	setA2 := toolsOf(t, p.Tools("a", []Handle{again}, nil, nil))
	if got := call(t, setA2, "mcp__everything__echo", `{"message":"a again"}`); got.IsError || !strings.Contains(got.Content, "a again") {
		t.Errorf("a's new server = %+v", got)
	}
	pidA2 := pidOf(t, again)
	if pidA2 == pidA {
		t.Error("the new server has the stopped one's pid")
	}

	// Every server's log is copied, the stopped one's too, though three
	// share one name.
	out := t.TempDir()
	if err := p.CopyLogs(out); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	if len(entries) != 4 || strings.Count(all.String(), "up for owner-a\n") != 2 || !strings.Contains(all.String(), "up for owner-b\n") ||
		!strings.Contains(all.String(), "up for owner-\n") {
		t.Errorf("copied logs: %d files holding %q, want 4: a's two, b's and the shared one's", len(entries), all.String())
	}

	p.Close()
	for _, pid := range []string{pidB, pidShared, pidA2} {
		if err := gone(pid); err != nil {
			t.Errorf("after Close: %v", err)
		}
	}
}

// CloseOwner while the owner's server is still starting ends the start:
// no process is left behind, and its tools resolve (without it) rather
// than wait.
func TestCloseOwnerDuringTheStartLeavesNoProcess(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The server writes its pid, then is slow to answer the handshake.
	script := `echo $$ > "$0"; sleep 1; exec ` + npmBin(t, "mcp-server-everything") + ` stdio`
	p, hs := started(t, Options{LogDir: dir}, Server{Name: "slow", Command: "sh", Owner: "a", Args: []string{"-c", script, pidFile}})
	var pid string
	for range 200 { // bounded: the shell writes its pid at once
		if b, err := os.ReadFile(pidFile); err == nil && strings.TrimSpace(string(b)) != "" {
			pid = strings.TrimSpace(string(b))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid == "" {
		t.Fatal("the server never started")
	}
	p.CloseOwner("a")
	if err := gone(pid); err != nil {
		t.Errorf("after CloseOwner during the start: %v", err)
	}
	if tools, err := p.Tools("a", hs, nil, nil).Tools(ctxT(t)); err != nil || len(tools) != 0 {
		t.Errorf("tools of the stopped server = %d, %v; want none, at once", len(tools), err)
	}
}
