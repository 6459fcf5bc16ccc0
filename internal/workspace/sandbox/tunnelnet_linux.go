package sandbox

import (
	"io"
	"strconv"
)

// TunnelNet is the network of a container (docker mode): its endpoints,
// reached over a tunnel (tunnel_linux.go) that massgen holds to the
// container's main process, the relay (TunnelRelayArgs), instead of the
// control socket a Net passes to a sandboxed program. Each endpoint is
// taken as a Net takes it: through a reverse proxy that puts the real key
// in place of the stand-in (https, or an endpoint with a key), or as raw
// TCP. One TunnelNet serves the containers of one agent in turn (a
// container made anew keeps the routes); Close it when the agent is done.
type TunnelNet struct {
	hostSide
}

// NewTunnelNet prepares the network of a container whose only ways out
// are eps.
func NewTunnelNet(eps []Endpoint) (*TunnelNet, error) {
	n := &TunnelNet{}
	if err := n.open(eps); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// Routes are the endpoints as commands in the container reach them, in
// NewTunnelNet's order.
func (n *TunnelNet) Routes() []Route { return n.routes }

// RelayArgs are the relay's arguments after its executable: the
// container's main process is that executable (this program, or any that
// links this package) with these arguments. The relay ends when its
// standard input does, so the container ends with massgen's hold on it.
func (n *TunnelNet) RelayArgs() []string {
	args := []string{tunnelArg}
	for _, p := range n.ports {
		args = append(args, strconv.Itoa(p))
	}
	return args
}

// Serve carries one container's tunnel: r is the relay's standard
// output, w its standard input. It returns when r ends (the container is
// gone) or the tunnel fails, with every stream of it ended.
func (n *TunnelNet) Serve(r io.Reader, w io.Writer) error { return n.ServeReady(r, w, nil) }

// ServeReady is Serve that calls ready (when not nil) once the relay
// listens on every endpoint's port: a command started before that could
// find nothing there.
func (n *TunnelNet) ServeReady(r io.Reader, w io.Writer, ready func()) error {
	t := newTunnel(w, func(c *tunnelConn, ep uint32) {
		n.mu.Lock()
		closed := n.closed
		n.mu.Unlock()
		if closed || int(ep) >= len(n.ends) {
			c.Close()
			return
		}
		end := n.ends[ep]
		if end.ln != nil {
			n.wg.Go(func() { end.ln.push(c) }) // the proxy's server closes it
			return
		}
		if !n.track(c) {
			c.Close()
			return
		}
		n.wg.Go(func() { n.tcp(c, end.addr) })
	})
	t.ready = ready
	return t.run(r)
}

// Close ends every relayed connection and massgen's side of the
// endpoints.
func (n *TunnelNet) Close() error {
	n.shut()
	for _, e := range n.ends {
		if e.srv != nil {
			e.srv.Close()
			e.ln.Close()
			e.trans.CloseIdleConnections()
		}
	}
	n.wg.Wait()
	return nil
}
