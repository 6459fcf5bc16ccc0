package sandbox

import (
	"errors"
	"io"
	"testing"
	"time"
)

// pairTunnels connects an inside and an outside tunnel in the process;
// opened is the outside's handler.
func pairTunnels(t *testing.T, opened func(*tunnelConn, uint32)) (inside, outside *tunnel, outsideDone chan error) {
	ir, ow := io.Pipe() // outside → inside
	or, iw := io.Pipe() // inside → outside
	inside = newTunnel(iw, nil)
	outside = newTunnel(ow, opened)
	outsideDone = make(chan error, 1)
	go inside.run(ir)
	go func() { outsideDone <- outside.run(or) }()
	t.Cleanup(func() { ir.Close(); or.Close(); iw.Close(); ow.Close() })
	return inside, outside, outsideDone
}

// The inside is what the agent runs: it may not open more than
// tunMaxStreams streams at once, nor make massgen hold more than
// tunMaxBuffered bytes it has not read; past that the tunnel is torn down
// rather than massgen's memory filled.
func TestTunnelBoundsWhatTheInsideCanMakeMassgenHold(t *testing.T) {
	t.Run("streams", func(t *testing.T) {
		got := make(chan *tunnelConn, tunMaxStreams+10)
		inside, _, _ := pairTunnels(t, func(c *tunnelConn, _ uint32) { got <- c })
		var opened []*tunnelConn
		for range tunMaxStreams + 5 {
			c, err := inside.open(0)
			if err != nil {
				t.Fatal(err)
			}
			opened = append(opened, c)
		}
		// The streams past the bound are closed by the outside at once.
		last := opened[len(opened)-1]
		buf := make([]byte, 1)
		done := make(chan error, 1)
		go func() { _, err := last.Read(buf); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("a stream past the bound read %v, want EOF (closed)", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a stream past the bound stayed open")
		}
		if len(got) != tunMaxStreams {
			t.Fatalf("the outside took %d streams, want %d", len(got), tunMaxStreams)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		inside, _, done := pairTunnels(t, func(*tunnelConn, uint32) {}) // never reads
		c, err := inside.open(0)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			chunk := make([]byte, tunMaxFrame)
			for sent := 0; sent <= tunMaxBuffered+tunMaxFrame; sent += len(chunk) {
				if _, err := c.Write(chunk); err != nil {
					return // the outside tore it down (the pipes close at the test's end)
				}
			}
		}()
		select {
		case err := <-done:
			if !errors.Is(err, errTunnelOverrun) {
				t.Fatalf("the outside ended with %v, want the overrun", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the outside held more than its bound")
		}
	})
}

// A stream's bytes come through whole and in order, each side's end of
// writing arrives as EOF, and a read data is released from the bound.
func TestTunnelCarriesStreamsWhole(t *testing.T) {
	echo := func(c *tunnelConn, _ uint32) {
		go func() {
			io.Copy(c, c)
			c.CloseWrite()
		}()
	}
	inside, outside, _ := pairTunnels(t, echo)
	for round := range 3 {
		c, err := inside.open(7)
		if err != nil {
			t.Fatal(err)
		}
		msg := make([]byte, 3*tunMaxFrame+123)
		for i := range msg {
			msg[i] = byte(i*7 + round)
		}
		go func() {
			c.Write(msg)
			c.CloseWrite()
		}()
		back, err := io.ReadAll(c)
		if err != nil || string(back) != string(msg) {
			t.Fatalf("round %d: %d bytes back (%v), want %d the same", round, len(back), err, len(msg))
		}
		c.Close()
	}
	outside.mu.Lock()
	held := outside.buffered
	outside.mu.Unlock()
	if held != 0 {
		t.Fatalf("the outside still counts %d bytes held after every stream was read", held)
	}
}
