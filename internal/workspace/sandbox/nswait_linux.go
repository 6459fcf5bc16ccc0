package sandbox

import (
	"encoding/json"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// nsWait closes the gap between bwrap exiting and its sandbox being gone.
// A command is stopped (timeout, a full workspace, cancel) by killing
// bwrap's process group; bwrap's init inside the sandbox then dies of
// --die-with-parent, and the kernel kills every other process of the PID
// namespace before that init finishes exiting. cmd.Wait returns when the
// outer bwrap has exited, which can be before that: a loop in the command
// could still write to the workspace after Run had returned and the
// workspace had been measured. nsWait learns the init's host pid from
// bwrap's --info-fd and, after the command, waits until it is gone.
type nsWait struct {
	r, w  *os.File
	pidfd chan int // the init's pidfd, or -1 when it could not be had
}

func newNSWait() (*nsWait, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &nsWait{r: r, w: w, pidfd: make(chan int, 1)}, nil
}

// started is called once bwrap runs: the pipe's write end is bwrap's
// alone, and the info it writes is read as soon as it comes, while the
// init (bwrap's child) is alive and its pid cannot have been reused.
func (n *nsWait) started() {
	n.w.Close()
	go func() {
		defer n.r.Close()
		var info struct {
			ChildPid int `json:"child-pid"`
		}
		fd := -1
		if json.NewDecoder(n.r).Decode(&info) == nil && info.ChildPid > 0 {
			if f, err := unix.PidfdOpen(info.ChildPid, 0); err == nil {
				fd = f
			}
		}
		n.pidfd <- fd
	}()
}

// abandon is called when bwrap did not start.
func (n *nsWait) abandon() { n.w.Close(); n.r.Close() }

// wait returns once the sandbox's init has exited, or after limit. Called
// after cmd.Wait: bwrap has exited, so its info was written or never will
// be, and the pipe is at its end either way.
func (n *nsWait) wait(limit time.Duration) {
	var fd int
	select {
	case fd = <-n.pidfd:
	case <-time.After(limit):
		return
	}
	if fd < 0 {
		return
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(limit)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}
