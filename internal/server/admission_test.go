package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitFor polls cond for at most two seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAdmissionQueuesInArrivalOrderAndRejectsBeyondTheQueue(t *testing.T) {
	a := newAdmission(1, 2)
	if err := a.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 2)
	for i := range 2 {
		go func() {
			if err := a.acquire(t.Context()); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			order <- i
			a.release()
		}()
		waitFor(t, "the waiter to queue", func() bool { _, q := a.load(); return q == i+1 })
	}
	if err := a.acquire(t.Context()); !errors.Is(err, errQueueFull) {
		t.Fatalf("third waiter: err = %v, want errQueueFull", err)
	}
	a.release()
	for want := range 2 {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("waiter %d got the slot before waiter %d", got, want)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the queue did not move")
		}
	}
	waitFor(t, "every slot to be free", func() bool { r, q := a.load(); return r == 0 && q == 0 })
}

func TestAdmissionWaiterThatGivesUpLeavesTheQueue(t *testing.T) {
	a := newAdmission(1, 1)
	if err := a.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.acquire(ctx) }()
	waitFor(t, "the waiter to queue", func() bool { _, q := a.load(); return q == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, q := a.load(); q != 0 {
		t.Fatalf("queue holds %d after the waiter left", q)
	}
	// The queue has room again, and the slot goes back to nobody on release.
	a.release()
	if r, _ := a.load(); r != 0 {
		t.Fatalf("running = %d after release", r)
	}
}

func TestAdmissionCloseTurnsWaitersAway(t *testing.T) {
	a := newAdmission(1, 4)
	if err := a.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.acquire(t.Context()) }()
	waitFor(t, "the waiter to queue", func() bool { _, q := a.load(); return q == 1 })
	a.close()
	if err := <-done; !errors.Is(err, errClosed) {
		t.Fatalf("queued: err = %v, want errClosed", err)
	}
	if err := a.acquire(t.Context()); !errors.Is(err, errClosed) {
		t.Fatalf("after close: err = %v, want errClosed", err)
	}
	a.release()
}
