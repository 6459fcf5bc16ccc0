package sandbox

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// relayArg, as the first argument, makes any program that links this
// package the network relay of a sandboxed program (Net) instead of
// itself: massgen, a test binary, a Go program using package massgen.
// It is checked in init, before the program's own start-up, so the relay
// costs one exec of an executable already in the page cache.
const relayArg = "__massgen_sandbox_relay__"

func init() {
	if len(os.Args) > 1 && os.Args[1] == relayArg {
		os.Exit(relayMain(os.Args[2:]))
	}
}

// relayMain is the relay: relayMain(FD PORT... -- PROGRAM ARG...) listens
// on 127.0.0.1:PORT for each endpoint, starts PROGRAM with the relay's own
// standard files and environment, relays each connection through the
// control socket FD, and exits with PROGRAM's status. PROGRAM dies with
// the relay (Pdeathsig), and the relay with the sandbox's init when
// PROGRAM exits, so neither outlives the other.
func relayMain(args []string) int {
	sep := slices.Index(args, "--")
	if sep < 1 || sep+1 >= len(args) {
		fmt.Fprintln(os.Stderr, "massgen relay: usage: FD PORT... -- PROGRAM ARG...")
		return 127
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "massgen relay: bad descriptor", args[0])
		return 127
	}
	unix.CloseOnExec(fd) // the program must not inherit it
	f := os.NewFile(uintptr(fd), "massgen-relay-control")
	c, err := net.FileConn(f)
	f.Close()
	ctl, ok := c.(*net.UnixConn)
	if err != nil || !ok {
		fmt.Fprintln(os.Stderr, "massgen relay: no control socket:", err)
		return 127
	}
	r := &relay{ctl: ctl, waiting: map[uint32]chan *os.File{}}
	for i, p := range args[1:sep] {
		ln, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "massgen relay:", err)
			return 127
		}
		go r.accept(ln, uint32(i))
	}
	go r.read()

	cmd := exec.Command(args[sep+1], args[sep+2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// Signals for the program reach the relay (the sandbox's init sends
	// them to its child): pass them on.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "massgen relay:", err)
		return 127
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	st, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if st.Signaled() {
		return 128 + int(st.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// relay is the inside of a Net.
type relay struct {
	ctl     *net.UnixConn
	next    atomic.Uint32
	mu      sync.Mutex
	waiting map[uint32]chan *os.File
	gone    bool
}

func (r *relay) accept(ln net.Listener, ep uint32) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go r.conn(c, ep)
	}
}

// conn asks massgen for a connection to endpoint ep and relays c to it.
func (r *relay) conn(c net.Conn, ep uint32) {
	defer c.Close()
	id := r.next.Add(1)
	ch := make(chan *os.File, 1)
	r.mu.Lock()
	if r.gone {
		r.mu.Unlock()
		return
	}
	r.waiting[id] = ch
	r.mu.Unlock()
	var req [8]byte
	binary.LittleEndian.PutUint32(req[:4], id)
	binary.LittleEndian.PutUint32(req[4:], ep)
	if _, _, err := r.ctl.WriteMsgUnix(req[:], nil, nil); err != nil {
		return
	}
	var f *os.File
	select {
	case f = <-ch:
	case <-time.After(time.Minute):
	}
	r.mu.Lock()
	delete(r.waiting, id)
	r.mu.Unlock()
	if f == nil {
		return
	}
	up, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return
	}
	defer up.Close()
	pipe(c, up)
}

// read takes massgen's answers: a request's id with the socket for it,
// or without one when massgen refuses.
func (r *relay) read() {
	var id [4]byte
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := r.ctl.ReadMsgUnix(id[:], oob)
		if err != nil || n == 0 {
			break
		}
		var f *os.File
		if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range msgs {
				if fds, err := unix.ParseUnixRights(&m); err == nil {
					for _, fd := range fds {
						unix.CloseOnExec(fd)
						if f == nil {
							f = os.NewFile(uintptr(fd), "massgen-relay-conn")
						} else {
							unix.Close(fd)
						}
					}
				}
			}
		}
		r.mu.Lock()
		ch := r.waiting[binary.LittleEndian.Uint32(id[:])]
		r.mu.Unlock()
		if ch == nil {
			if f != nil {
				f.Close()
			}
			continue
		}
		ch <- f // buffered: one answer per request
	}
	r.mu.Lock()
	r.gone = true
	for _, ch := range r.waiting {
		select {
		case ch <- nil:
		default:
		}
	}
	r.mu.Unlock()
}
