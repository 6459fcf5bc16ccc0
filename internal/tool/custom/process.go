package custom

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// process is one running runner: requests go out as JSON lines, replies
// come back by id, so many calls share it at once.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tail

	writeMu sync.Mutex // one line at a time on stdin

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan json.RawMessage

	done chan struct{} // closed when the runner has exited
	err  error         // why it exited; set before done closes
}

// startProcess starts the runner script with python in dir.
func startProcess(python, script, dir string) (*process, error) {
	cmd := exec.Command(python, "-u", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONIOENCODING=utf-8", "PYTHONUNBUFFERED=1")
	isolate(cmd)
	p := &process{cmd: cmd, stderr: newTail(4096), pending: map[int64]chan json.RawMessage{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", python, err)
	}
	go p.read(stdout)
	return p, nil
}

// read routes replies to their callers until the runner's stdout ends,
// then reaps the runner and fails whatever is still waiting.
func (p *process) read(stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var head struct {
				ID int64 `json:"id"`
			}
			if json.Unmarshal(line, &head) == nil {
				p.mu.Lock()
				ch := p.pending[head.ID]
				delete(p.pending, head.ID)
				p.mu.Unlock()
				if ch != nil {
					ch <- line // buffered: never blocks
				}
			}
		}
		if err != nil {
			break
		}
	}
	werr := p.cmd.Wait()
	p.err = fmt.Errorf("the Python tool runner exited (%v)%s", describeExit(werr), p.stderr.note("its stderr ends with"))
	close(p.done)
}

func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// request sends msg (given an id) and waits for its reply. If ctx ends
// first, the runner is told to cancel the call and ctx's error returned.
func (p *process) request(ctx context.Context, msg map[string]any) (json.RawMessage, error) {
	ch := make(chan json.RawMessage, 1)
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	p.pending[id] = ch
	p.mu.Unlock()
	msg["id"] = id
	if err := p.send(msg); err != nil {
		p.forget(id)
		select {
		case <-p.done:
			return nil, p.err
		case <-time.After(time.Second): // let the reader reap a runner that just died
			return nil, fmt.Errorf("cannot write to the Python tool runner: %w", err)
		}
	}
	select {
	case line := <-ch:
		return line, nil
	case <-p.done:
		return nil, p.err
	case <-ctx.Done():
		p.forget(id)
		_ = p.send(map[string]any{"op": "cancel", "target": id})
		return nil, ctx.Err()
	}
}

func (p *process) forget(id int64) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

func (p *process) send(msg map[string]any) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	_, err = p.stdin.Write(append(data, '\n'))
	return err
}

// alive reports whether the runner is still running.
func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop kills the runner's process group and waits until it is reaped.
func (p *process) stop() {
	_ = p.stdin.Close()
	_ = killGroup(p.cmd)
	<-p.done
}
