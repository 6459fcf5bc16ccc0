package sandbox

// A tunnel carries many TCP connections over one byte stream: docker mode's
// way to give a container its endpoints (tunnelnet_linux.go). A container has
// no network of the host's and no unix sockets (its seccomp profile), and
// the engine passes no descriptor into it, but massgen holds one stream to
// the container's main process anyway: the attach connection of its
// standard input and output. The main process is then the relay
// (tunnelrelay_linux.go): it listens on 127.0.0.1 inside for each endpoint and
// opens a stream over the tunnel for every connection it accepts; massgen
// takes each stream to its endpoint as it does a Net's connections.
//
// A frame is the stream's id (4 bytes), its kind (1 byte), the payload's
// length (4 bytes, little-endian) and the payload. Only the inside opens
// streams (an open frame names the endpoint); either side sends data, its
// end of writing (eof) or drops the stream (close); the inside says once
// that it listens (ready). Received data waits in
// the stream until it is read, so one slow reader never stalls the others;
// the whole tunnel holds at most tunMaxBuffered bytes and tunMaxStreams
// streams, past which it is torn down (the other side is not trusted: it
// runs what the agent runs).

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

const (
	tunOpen  = 1
	tunData  = 2
	tunEOF   = 3
	tunClose = 4
	tunReady = 5 // the relay listens on every endpoint's port (stream 0)

	tunHeader      = 9
	tunMaxFrame    = 32 << 10
	tunMaxBuffered = 64 << 20
	tunMaxStreams  = 256
)

// errTunnelOverrun is a peer that sent more than the tunnel holds.
var errTunnelOverrun = errors.New("the relay sent more than massgen holds")

// tunnel is one side of the byte stream.
type tunnel struct {
	w   io.Writer
	wmu sync.Mutex

	mu       sync.Mutex
	streams  map[uint32]*tunnelConn
	next     uint32
	buffered int
	err      error // set once the tunnel is down

	// opened hears a stream the other side opened, for endpoint ep (nil
	// on the side that opens streams).
	opened func(c *tunnelConn, ep uint32)
	// ready hears the inside's ready frame (nil: not listened for).
	ready func()
}

func newTunnel(w io.Writer, opened func(*tunnelConn, uint32)) *tunnel {
	return &tunnel{w: w, streams: map[uint32]*tunnelConn{}, opened: opened}
}

// run reads frames from r until it ends or fails, then ends every stream.
func (m *tunnel) run(r io.Reader) error {
	err := m.read(r)
	if err == nil {
		err = io.EOF
	}
	m.down(err)
	return err
}

func (m *tunnel) read(r io.Reader) error {
	var h [tunHeader]byte
	buf := make([]byte, tunMaxFrame)
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return err
		}
		id, kind, n := binary.LittleEndian.Uint32(h[:4]), h[4], binary.LittleEndian.Uint32(h[5:])
		if n > tunMaxFrame {
			return errTunnelOverrun
		}
		p := buf[:n]
		if _, err := io.ReadFull(r, p); err != nil {
			return err
		}
		switch kind {
		case tunReady:
			if m.ready != nil {
				m.ready()
				m.ready = nil
			}
		case tunOpen:
			if m.opened == nil || n != 4 {
				return errors.New("tunnel: an open frame from the wrong side")
			}
			m.mu.Lock()
			_, dup := m.streams[id]
			full := len(m.streams) >= tunMaxStreams
			var c *tunnelConn
			if !dup && !full {
				c = m.newConn(id)
			}
			m.mu.Unlock()
			if c == nil {
				m.send(id, tunClose, nil)
				continue
			}
			m.opened(c, binary.LittleEndian.Uint32(p))
		case tunData, tunEOF, tunClose:
			m.mu.Lock()
			c := m.streams[id]
			if c == nil {
				m.mu.Unlock()
				continue // a stream this side dropped already
			}
			if kind == tunData {
				if m.buffered+len(p) > tunMaxBuffered {
					m.mu.Unlock()
					return errTunnelOverrun
				}
				m.buffered += len(p)
			}
			m.mu.Unlock()
			c.arrive(kind, p)
		default:
			return errors.New("tunnel: an unknown frame")
		}
	}
}

// open opens a stream to endpoint ep (the inside's side).
func (m *tunnel) open(ep uint32) (*tunnelConn, error) {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return nil, m.err
	}
	m.next++
	c := m.newConn(m.next)
	m.mu.Unlock()
	var p [4]byte
	binary.LittleEndian.PutUint32(p[:], ep)
	if err := m.send(c.id, tunOpen, p[:]); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// newConn registers stream id; m.mu is held.
func (m *tunnel) newConn(id uint32) *tunnelConn {
	c := &tunnelConn{m: m, id: id}
	c.cond = sync.NewCond(&c.mu)
	m.streams[id] = c
	return c
}

// send writes one frame.
func (m *tunnel) send(id uint32, kind byte, p []byte) error {
	var h [tunHeader]byte
	binary.LittleEndian.PutUint32(h[:4], id)
	h[4] = kind
	binary.LittleEndian.PutUint32(h[5:], uint32(len(p)))
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if err := m.failed(); err != nil {
		return err
	}
	if _, err := m.w.Write(append(h[:], p...)); err != nil {
		m.down(err)
		return err
	}
	return nil
}

func (m *tunnel) failed() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// down ends the tunnel and every stream with err.
func (m *tunnel) down(err error) {
	m.mu.Lock()
	if m.err == nil {
		m.err = err
	}
	streams := m.streams
	m.streams = map[uint32]*tunnelConn{}
	m.mu.Unlock()
	for _, c := range streams {
		c.mu.Lock()
		c.readEOF, c.writeShut, c.reset = true, true, true
		c.cond.Broadcast()
		c.mu.Unlock()
	}
}

// forget drops stream c and the bytes it still held.
func (m *tunnel) forget(c *tunnelConn, held int) {
	m.mu.Lock()
	if m.streams[c.id] == c {
		delete(m.streams, c.id)
	}
	m.buffered -= held
	m.mu.Unlock()
}

// tunnelConn is one stream, a net.Conn (deadlines are not kept: each side
// ends its streams by closing them, and all of them go with the tunnel).
type tunnelConn struct {
	m  *tunnel
	id uint32

	mu        sync.Mutex
	cond      *sync.Cond
	buf       []byte
	readEOF   bool // the other side sent eof or close
	writeShut bool // this side sent eof or close
	reset     bool // the stream is gone: writes fail
	closed    bool
}

func (c *tunnelConn) arrive(kind byte, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch kind {
	case tunData:
		if c.closed || c.readEOF {
			c.m.forget(c, len(p)) // nobody will read it
			return
		}
		c.buf = append(c.buf, p...)
	case tunEOF:
		c.readEOF = true
	case tunClose:
		c.readEOF, c.reset = true, true
	}
	c.cond.Broadcast()
}

func (c *tunnelConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.buf) == 0 && !c.readEOF && !c.closed {
		c.cond.Wait()
	}
	if c.closed {
		return 0, net.ErrClosed
	}
	if len(c.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	if len(c.buf) == 0 {
		c.buf = nil
	}
	c.m.mu.Lock()
	c.m.buffered -= n
	c.m.mu.Unlock()
	return n, nil
}

func (c *tunnelConn) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		c.mu.Lock()
		shut := c.writeShut || c.reset || c.closed
		c.mu.Unlock()
		if shut {
			return written, net.ErrClosed
		}
		n := min(len(p), tunMaxFrame)
		if err := c.m.send(c.id, tunData, p[:n]); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// CloseWrite sends this side's end of writing.
func (c *tunnelConn) CloseWrite() error {
	c.mu.Lock()
	if c.writeShut || c.reset || c.closed {
		c.mu.Unlock()
		return nil
	}
	c.writeShut = true
	c.mu.Unlock()
	return c.m.send(c.id, tunEOF, nil)
}

// Close drops the stream on both sides.
func (c *tunnelConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	held := len(c.buf)
	c.buf = nil
	reset := c.reset
	c.cond.Broadcast()
	c.mu.Unlock()
	c.m.forget(c, held)
	if !reset {
		_ = c.m.send(c.id, tunClose, nil)
	}
	return nil
}

func (c *tunnelConn) LocalAddr() net.Addr              { return relayAddr{} }
func (c *tunnelConn) RemoteAddr() net.Addr             { return relayAddr{} }
func (c *tunnelConn) SetDeadline(time.Time) error      { return nil }
func (c *tunnelConn) SetReadDeadline(time.Time) error  { return nil }
func (c *tunnelConn) SetWriteDeadline(time.Time) error { return nil }
