package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// relayPortBase is the first port the relay listens on inside: the
// namespace is new, so every port is free when the relay starts.
const relayPortBase = 47100

// Net is the network of one sandboxed program: its endpoints, the relay's
// control socket and massgen's side of every relayed connection. A Net
// serves one program; Close it once the program has exited.
type Net struct {
	hostSide
	exe    string   // the relay's executable: this program
	inside *os.File // the relay's end of the control socket
	ctl    *net.UnixConn
}

// hostSide is massgen's side of a relayed network, whichever way the
// relayed connections come (a Net's control socket, a TunnelNet's
// tunnel): the endpoints as the inside reaches them, massgen's end of
// each, and every connection relayed so far.
type hostSide struct {
	routes []Route
	ports  []int
	ends   []*hostEnd

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// hostEnd is massgen's side of one endpoint.
type hostEnd struct {
	addr  string        // raw TCP: host:port to dial
	ln    *connListener // reverse proxy: the relayed connections
	srv   *http.Server
	trans *http.Transport
}

// NewNet prepares the network of one program whose only ways out are eps.
func NewNet(eps []Endpoint) (*Net, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the network relay: %w", err)
	}
	n := &Net{exe: exe}
	if err := n.hostSide.open(eps); err != nil {
		n.Close()
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("the network relay: %w", err)
	}
	n.inside = os.NewFile(uintptr(fds[1]), "massgen-relay-control")
	host := os.NewFile(uintptr(fds[0]), "massgen-relay-control")
	c, err := net.FileConn(host)
	host.Close()
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("the network relay: %w", err)
	}
	n.ctl = c.(*net.UnixConn)
	n.wg.Go(n.serve)
	return n, nil
}

// Routes are the endpoints as the program reaches them, in NewNet's order.
func (n *Net) Routes() []Route { return n.routes }

// Close ends every relayed connection and massgen's side of the relay.
func (n *Net) Close() error {
	n.shut()
	if n.ctl != nil {
		n.ctl.Close()
	}
	if n.inside != nil {
		n.inside.Close()
	}
	for _, e := range n.ends {
		if e.srv != nil {
			e.srv.Close()
			e.trans.CloseIdleConnections()
		}
	}
	n.wg.Wait()
	for _, e := range n.ends {
		if e.trans != nil {
			e.trans.CloseIdleConnections() // a connection a handler returned while closing
		}
	}
	return nil
}

// relayArgs are what comes between bwrap's "--" and the program: the
// relay with the control socket's descriptor in the program's process
// and its ports. extraFiles is len(cmd.ExtraFiles) once the control
// socket is added.
func (n *Net) relayArgs(extraFiles int) []string {
	args := []string{n.exe, relayArg, strconv.Itoa(2 + extraFiles)}
	for _, p := range n.ports {
		args = append(args, strconv.Itoa(p))
	}
	return append(args, "--")
}

// serve answers the relay's requests: each is a connection accepted
// inside for one endpoint, answered with a fresh socket whose other end
// massgen takes to the endpoint.
func (n *Net) serve() {
	var req [8]byte
	for {
		k, _, _, _, err := n.ctl.ReadMsgUnix(req[:], nil)
		if err != nil || k == 0 {
			return
		}
		if k != len(req) {
			continue
		}
		ep := binary.LittleEndian.Uint32(req[4:]) // req[:4] is the id, sent back
		if int(ep) >= len(n.ends) {
			_, _, _ = n.ctl.WriteMsgUnix(req[:4], nil, nil) // refused: no descriptor
			continue
		}
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			_, _, _ = n.ctl.WriteMsgUnix(req[:4], nil, nil)
			continue
		}
		_, _, err = n.ctl.WriteMsgUnix(req[:4], unix.UnixRights(fds[1]), nil)
		unix.Close(fds[1])
		f := os.NewFile(uintptr(fds[0]), "massgen-relay-conn")
		c, cerr := net.FileConn(f)
		f.Close()
		if err != nil || cerr != nil {
			if c != nil {
				c.Close()
			}
			continue
		}
		if !n.track(c) {
			c.Close()
			return
		}
		end := n.ends[ep]
		if end.ln != nil {
			end.ln.push(c)
			continue
		}
		n.wg.Go(func() { n.tcp(c, end.addr) })
	}
}

// open sets up massgen's end of each of eps, the i-th reached inside on
// port relayPortBase+i. On an error the caller closes what is open.
func (n *hostSide) open(eps []Endpoint) error {
	n.conns = map[net.Conn]struct{}{}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for i, ep := range eps {
		u, err := url.Parse(ep.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("endpoint %q is not an http or https URL", ep.URL)
		}
		port := relayPortBase + i
		inside := *u
		inside.Scheme, inside.Host, inside.User = "http", "127.0.0.1:"+strconv.Itoa(port), nil
		r := Route{URL: inside.String()}
		end := &hostEnd{}
		if u.Scheme == "https" || ep.Key != "" {
			if ep.Key != "" {
				r.Key = standIn()
			}
			end.proxy(u, ep.Key, r.Key)
			n.wg.Go(func() { _ = end.srv.Serve(end.ln) })
		} else {
			end.addr = u.Host
			if u.Port() == "" {
				end.addr = net.JoinHostPort(u.Hostname(), "80")
			}
		}
		n.routes, n.ports, n.ends = append(n.routes, r), append(n.ports, port), append(n.ends, end)
	}
	return nil
}

// shut marks n closed, ends every relayed connection and cancels the
// dials under way; the caller then closes its own parts and the ends.
func (n *hostSide) shut() {
	n.mu.Lock()
	n.closed = true
	for c := range n.conns {
		c.Close()
	}
	n.mu.Unlock()
	n.cancel()
}

// track records a connection for Close; false once closed.
func (n *hostSide) track(c net.Conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.conns[c] = struct{}{}
	return true
}

func (n *hostSide) untrack(c net.Conn) {
	n.mu.Lock()
	delete(n.conns, c)
	n.mu.Unlock()
	c.Close()
}

// tcp relays c to addr.
func (n *hostSide) tcp(c net.Conn, addr string) {
	defer n.untrack(c)
	d := net.Dialer{Timeout: 30 * time.Second}
	up, err := d.DialContext(n.ctx, "tcp", addr)
	if err != nil {
		return
	}
	if !n.track(up) {
		up.Close()
		return
	}
	defer n.untrack(up)
	pipe(c, up)
}

// pipe copies both ways until both sides are done, passing on each
// side's end of writing.
func pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	half := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	wg.Go(func() { half(a, b) })
	half(b, a)
	wg.Wait()
}

// proxy makes e a reverse proxy to target's origin that puts key in
// place of standIn.
func (e *hostEnd) proxy(target *url.URL, key, standIn string) {
	origin := &url.URL{Scheme: target.Scheme, Host: target.Host}
	e.trans = http.DefaultTransport.(*http.Transport).Clone()
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(origin)
			if standIn == "" {
				return
			}
			for _, vs := range pr.Out.Header {
				for i, v := range vs {
					vs[i] = strings.ReplaceAll(v, standIn, key)
				}
			}
			pr.Out.URL.RawQuery = strings.ReplaceAll(pr.Out.URL.RawQuery, standIn, url.QueryEscape(key))
		},
		Transport:     e.trans,
		FlushInterval: -1, // streamed tokens go on at once
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "massgen's relay to "+origin.Host+": "+err.Error(), http.StatusBadGateway)
		},
	}
	e.ln = newConnListener()
	e.srv = &http.Server{ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: time.Minute,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Without it the server, as the response's header goes out,
			// drains what it takes for the request body's unread rest —
			// while the transport may still be reading the body to send
			// it: the transport then sees a closed body, drops the
			// provider's connection and the stream is cut (about one
			// request in a thousand against the simulator).
			_ = http.NewResponseController(w).EnableFullDuplex()
			rp.ServeHTTP(w, r)
		})}
}

// standIn is a key that means nothing outside this run.
func standIn() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "massgen-sandbox-key-" + hex.EncodeToString(b)
}

// connListener is a net.Listener of the connections the relay hands over.
type connListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnListener() *connListener {
	return &connListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return relayAddr{} }

type relayAddr struct{}

func (relayAddr) Network() string { return "relay" }
func (relayAddr) String() string  { return "massgen-relay" }

func (n *Net) exePath() string { return n.exe }
