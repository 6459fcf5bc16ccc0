package server

import (
	"context"
	"fmt"
	"time"
)

// enter and leave count the chat completion requests in the handler, so
// that Shutdown knows when the last run has ended; isClosing is true from
// the moment Shutdown is called.

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.active++
	return true
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.closing && s.active == 0 {
		s.idleOnce.Do(func() { close(s.idle) })
	}
}

// Shutdown stops the server gracefully: from now on every request gets
// 503 and queued requests leave the queue with 503; runs in flight may
// finish until ctx is done, then they are cancelled (their clients get an
// error), and Shutdown waits up to Deps.StopWait for them to end. It
// returns nil when every run finished on its own, else an error wrapping
// ctx's. Shut the http.Server down afterwards, to close its connections.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	if s.active == 0 {
		s.idleOnce.Do(func() { close(s.idle) })
	}
	s.mu.Unlock()
	s.adm.close()
	// Background runs recorded in the database pause at once: the next
	// start carries them on from their logs (background.go).
	if s.d.Responses != nil {
		s.bg.cancelAll(errStopped)
	}

	select {
	case <-s.idle:
		return nil
	case <-ctx.Done():
	}
	s.stop(errStopped)
	running, _ := s.adm.load()
	timer := time.NewTimer(s.d.StopWait)
	defer timer.Stop()
	select {
	case <-s.idle:
		return fmt.Errorf("server: grace period over, %d run(s) cancelled: %w", running, ctx.Err())
	case <-timer.C:
		return fmt.Errorf("server: grace period over and runs still in flight %s after cancelling them: %w", s.d.StopWait, ctx.Err())
	}
}
