package attack

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Processes a command or an MCP server leaves behind die with the run.
func TestProcessesLeftBehind(t *testing.T) {
	needBwrap(t)
	needPython(t)
	for name, mk := range map[string]func(tag string) team{
		"cmd: setsid nohup": func(tag string) team {
			return team{coord: []call{sh("setsid nohup sh -c 'sleep 1000; : " + tag + "' > /dev/null 2>&1 &")}}
		},
		"cmd: double fork": func(tag string) team {
			return team{coord: []call{sh("( sh -c 'sleep 1000; : " + tag + "' & ) ; true")}}
		},
		"cmd: nohup": func(tag string) team {
			return team{coord: []call{sh("nohup sh -c 'sleep 1000; : " + tag + "' > /dev/null 2>&1 &")}}
		},
		"cmd: in the presentation": func(tag string) team {
			return team{present: []call{sh("setsid sh -c 'sleep 1000; : " + tag + "' > /dev/null 2>&1 &")}}
		},
		"mcp tool: setsid": func(tag string) team {
			return team{mcp: evilServer(""), coord: []call{mcpRun("setsid sh -c 'sleep 1000; : " + tag + "' > /dev/null 2>&1 &")}}
		},
		"mcp start: setsid": func(tag string) team {
			return team{mcp: evilServer("setsid sh -c 'sleep 1000; : " + tag + "' > /dev/null 2>&1 &"), coord: []call{mcpRun("true")}}
		},
	} {
		attempt(t, name, func(t *testing.T) {
			t.Parallel()
			tag := "massgen-attack-left-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			t.Cleanup(func() { killMatching(tag) })
			dir := tempDir(t)
			r := runTeam(t, dir, mk(tag), runOpts{})
			time.Sleep(time.Second)
			if ps := procsMatching(tag); len(ps) > 0 {
				t.Errorf("processes survive the run (exit %d):\n%s", r.code, strings.Join(ps, "\n"))
			}
		})
	}
}

// A fork bomb is stopped by a process limit. The test's own safety net
// is a pids cgroup a little above docker mode's 4096 (so the host is
// never at risk); the attempt fails if massgen's limit did not stop it
// before the net did.
func TestForkBomb(t *testing.T) {
	needBwrap(t)
	attempt(t, ":(){ :|:& };:", func(t *testing.T) {
		cg := filepath.Join("/sys/fs/cgroup/pids", "massgen-attack-"+strconv.Itoa(os.Getpid()))
		if err := os.Mkdir(cg, 0o755); err != nil {
			t.Skipf("no pids cgroup to keep the host safe (%v): a fork bomb is not run without one", err)
		}
		defer os.Remove(cg)
		must(t, os.WriteFile(filepath.Join(cg, "pids.max"), []byte("4200"), 0o644))
		before := len(procsMatching(""))
		dir := tempDir(t)
		r := runTeam(t, dir, team{coord: []call{sh("timeout -s KILL 20 bash -c ':(){ :|:& };:'; echo bomb-over > ran.txt")}}, runOpts{
			timeout: 120 * time.Second,
			started: func(p *os.Process) {
				os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(p.Pid)), 0o644)
			},
		})
		events, _ := os.ReadFile(filepath.Join(cg, "pids.events"))
		cur, _ := os.ReadFile(filepath.Join(cg, "pids.current"))
		t.Logf("run took %s, exit %d; pids.events %q, left in the cgroup %q", r.dur, r.code, strings.TrimSpace(string(events)), strings.TrimSpace(string(cur)))
		if f := strings.Fields(string(events)); len(f) == 2 && f[1] != "0" {
			t.Errorf("the bomb reached the test's safety net of 4200 processes: massgen set no lower process limit")
		}
		for i := 0; i < 50 && strings.TrimSpace(string(cur)) != "0"; i++ {
			time.Sleep(100 * time.Millisecond)
			cur, _ = os.ReadFile(filepath.Join(cg, "pids.current"))
		}
		if strings.TrimSpace(string(cur)) != "0" {
			t.Errorf("%s processes of the bomb survive the run", cur)
			if procs, err := os.ReadFile(filepath.Join(cg, "cgroup.procs")); err == nil {
				for _, p := range strings.Fields(string(procs)) {
					if pid, _ := strconv.Atoi(p); pid > 1 {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		}
		if r.timedOut {
			t.Errorf("the run did not end within 120 s")
		}
		if out, err := exec.Command("true").CombinedOutput(); err != nil {
			t.Errorf("the host cannot start a process after the bomb: %v %s", err, out)
		}
		if after := len(procsMatching("")); after > before+50 {
			t.Errorf("%d host processes after the bomb, %d before", after, before)
		}
	})
}

// diskUsage is the bytes dir's files take on disk, each file once
// however many hard links it has (a snapshot and its views are links).
func diskUsage(dir string) int64 {
	var n int64
	seen := map[[2]uint64]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				if st, ok := info.Sys().(*syscall.Stat_t); ok && !seen[[2]uint64{uint64(st.Dev), st.Ino}] {
					seen[[2]uint64{uint64(st.Dev), st.Ino}] = true
					n += st.Blocks * 512
				}
			}
		}
		return nil
	})
	return n
}

// A huge file (or a sparse one the copies would fill) is stopped by a
// workspace size limit: the run's directory never takes 1.2 GiB. The
// test's safety net: massgen runs with RLIMIT_FSIZE 4 GiB.
func TestHugeFiles(t *testing.T) {
	needBwrap(t)
	for name, cmd := range map[string]string{
		"1.5 GiB written":             "head -c 1536M /dev/zero > big.bin; ls -l big.bin",
		"a 3 GiB sparse file to copy": "truncate -s 3G sparse.bin; ls -ls sparse.bin",
		"2000 files of 1 MiB":         "mkdir many; for i in $(seq 2000); do head -c 1M /dev/zero > many/f$i || break; done",
	} {
		attempt(t, name, func(t *testing.T) {
			var st unix.Statfs_t
			if err := unix.Statfs(os.TempDir(), &st); err != nil || int64(st.Bavail)*st.Bsize < 20<<30 {
				t.Skipf("less than 20 GiB free in %s: not filling it", os.TempDir())
			}
			dir := tempDir(t)
			// The limit is set, so that it is what is tested, not the
			// default (1 GiB, which with a snapshot and the final copy
			// could reach 3 GiB here).
			s := team{coord: []call{sh(cmd)}, backend: map[string]any{"workspace_max_size_mb": 300}}
			must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), s.yaml(), 0o644))
			r := massgenWrapped(t, dir, []string{"prlimit", "--fsize=4294967296", "--"}, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
			used := diskUsage(dir)
			t.Logf("exit %d in %s; the run's directory takes %d MiB", r.code, r.dur, used>>20)
			if used > 1200<<20 {
				t.Errorf("the run's directory takes %d MiB on disk: no workspace size limit stopped it", used>>20)
			}
		})
	}
}

// massgenWrapped runs the binary under a wrapper command (prlimit).
func massgenWrapped(t *testing.T, dir string, wrap []string, args ...string) result {
	slots <- struct{}{}
	defer func() { <-slots }()
	cmd := exec.Command(wrap[0], append(append(wrap[1:], bin), args...)...)
	cmd.Dir = dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	cmd.Run()
	return result{dir: dir, code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String(), dur: time.Since(start)}
}

// openPTY makes a pseudo-terminal (no creack/pty in go.mod: x/sys/unix).
func openPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, err
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}

const tiocsti = `import fcntl, termios, os
out = []
def inject(fd):
    for c in b"echo INJ-%s\n":
        fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
for fd in range(0, 64):
    try:
        inject(fd); out.append("injected via fd %%d" %% fd)
    except Exception as e:
        pass
try:
    fd = os.open("/dev/tty", os.O_RDWR)
    out.append("opened /dev/tty")
    inject(fd); out.append("injected via /dev/tty")
except Exception as e:
    out.append("no /dev/tty: %%r" %% (e,))
open("out.txt", "w").write("\n".join(out) + "\n")
open("ran.txt", "w").write("ran")
`

// Class 8: under a real terminal, a command or an MCP server cannot push
// input into it (TIOCSTI) nor open it.
func TestTerminalInjection(t *testing.T) {
	needBwrap(t)
	needPython(t)
	for _, via := range []string{"cmd", "mcp", "mcp-start"} {
		attempt(t, via+": TIOCSTI on every fd and /dev/tty", func(t *testing.T) {
			tag := strconv.FormatInt(time.Now().UnixNano(), 36)
			dir := tempDir(t)
			script := filepath.Join(dir, "inj.py")
			must(t, os.WriteFile(script, []byte(fmt.Sprintf(tiocsti, tag)), 0o644))
			s := team{}
			run := "cp " + script + " . 2>/dev/null; python3 inj.py"
			switch via {
			case "cmd":
				s.coord = []call{tc("write_file", map[string]any{"path": "inj.py", "content": fmt.Sprintf(tiocsti, tag)}), sh("python3 inj.py")}
			case "mcp":
				s.mcp = evilServer("")
				s.coord = []call{tc("write_file", map[string]any{"path": "inj.py", "content": fmt.Sprintf(tiocsti, tag)})}
				s.presentSteps = nil
				s.coord = append(s.coord, mcpRun("python3 inj.py"))
			case "mcp-start":
				s.mcp = evilServer("python3 -c " + shellQuote(fmt.Sprintf(tiocsti, tag)))
				s.coord = []call{mcpRun("true")}
			}
			_ = run
			must(t, os.WriteFile(filepath.Join(dir, "c.yaml"), s.yaml(), 0o644))
			m, sl, err := openPTY()
			if err != nil {
				t.Skipf("no pseudo-terminal here: %v", err)
			}
			defer m.Close()
			defer sl.Close()
			cmd := exec.Command(bin, "--display", "plain", "--log-dir", "logs", "--config", "c.yaml", "Do the task.")
			cmd.Dir = dir
			cmd.Stdin, cmd.Stdout, cmd.Stderr = sl, sl, sl
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			var screen strings.Builder
			done := make(chan struct{})
			go func() { io.Copy(&screen, m); close(done) }()
			must(t, cmd.Start())
			waited := make(chan error)
			go func() { waited <- cmd.Wait() }()
			select {
			case <-waited:
			case <-time.After(90 * time.Second):
				cmd.Process.Kill()
				<-waited
				t.Errorf("the run did not end")
			}
			pending, _ := unix.IoctlGetInt(int(sl.Fd()), unix.TIOCINQ)
			time.Sleep(200 * time.Millisecond)
			// The terminal's last words, then its end: the copy of the
			// screen is complete before it is read.
			sl.Close()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				m.Close()
				<-done
			}
			out, _ := wsFile(dir, "out.txt")
			t.Logf("in the sandbox: %s; input pending on the terminal: %d", strings.TrimSpace(out), pending)
			if strings.Contains(out, "injected") {
				t.Errorf("TIOCSTI worked: %s", out)
			}
			if strings.Contains(out, "opened /dev/tty") {
				t.Errorf("the sandbox opened the controlling terminal")
			}
			if pending > 0 {
				t.Errorf("%d bytes were pushed into the terminal's input", pending)
			}
			if strings.Contains(screen.String(), "INJ-"+tag) {
				t.Errorf("the injected input shows on the terminal")
			}
			if _, ok := wsFile(dir, "ran.txt"); !ok {
				t.Logf("the attempt did not run; the terminal showed:\n%s", tail(screen.String(), 2000))
			}
		})
	}
	attempt(t, "cmd: no controlling terminal (tty, ps -o sid)", func(t *testing.T) {
		dir := tempDir(t)
		out, ran, r := probe(t, dir, "cmd", "tty; ps -o pid,sid,tty,comm -e", team{})
		t.Logf("%s", out)
		if ran && !strings.Contains(out, "not a tty") {
			t.Errorf("the command has a terminal:\n%s\n%s", out, r)
		}
	})
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
