package sandbox

import (
	"fmt"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Resource limits of a sandboxed command are set inside the sandbox, by
// util-linux's prlimit just before the shell: bwrap has no option for
// them, and set there they fall on the command's own user namespace. The
// kernel counts RLIMIT_NPROC per user namespace (Linux 5.14 on) and holds
// even root to it there, since the command has no capability in the
// host's namespace, so a fork bomb stops at MaxProcesses tasks of its
// own, not at the host's limit. RLIMIT_FSIZE keeps any one file within
// what the workspace has left.

// prlimitPath is util-linux's prlimit where the sandbox shows it, or "".
var prlimitPath = sync.OnceValue(func() string {
	for _, p := range []string{"/usr/bin/prlimit", "/bin/prlimit"} {
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	return ""
})

// limits are the arguments that run the command under them, or nothing
// where prlimit is missing (Warnings says so).
func limits(procs int, room int64) []string {
	p := prlimitPath()
	if p == "" {
		return nil
	}
	return []string{p, "--nproc=" + strconv.Itoa(procs), "--fsize=" + strconv.FormatInt(max(room, 0), 10)}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// fullNote tells the model why its command was stopped.
func (r *Runner) fullNote() string {
	return fmt.Sprintf("the command was stopped: it filled your workspace past its limit of %s "+
		"(workspace_max_size_mb); delete files before writing more", mib(r.g.MaxBytes()))
}

// watchSize stops a command (kill) when the workspace passes its limit while it runs:
// RLIMIT_FSIZE bounds each file by what was left when the command began,
// not many files together. The workspace is measured every sizePoll, less
// often when measuring it takes long (a large tree), so the walk never
// costs more than a tenth of the command's time. stop ends the watch.
func (r *Runner) watchSize(kill func(), full *atomic.Bool) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		wait := sizePoll
		for {
			select {
			case <-done:
				return
			case <-time.After(wait):
			}
			start := time.Now()
			used := r.g.Usage()
			wait = max(sizePoll, 10*time.Since(start))
			if used > r.g.MaxBytes() {
				full.Store(true)
				kill()
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

const sizePoll = 100 * time.Millisecond
