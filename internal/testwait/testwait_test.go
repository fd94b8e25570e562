package testwait_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
)

func TestHelpersPassWhenTheWaitEnds(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := testwait.Recv(t, ch, "the value"); got != 7 {
		t.Errorf("Recv = %d, want 7", got)
	}
	testwait.Send(t, ch, 8, "a value")
	if got := <-ch; got != 8 {
		t.Errorf("Send sent %d, want 8", got)
	}
	var wg sync.WaitGroup
	wg.Go(func() {})
	testwait.Wait(t, &wg, "the goroutine")
	var mu sync.Mutex
	testwait.Lock(t, &mu, "mu")
	mu.Unlock()
	f := clock.NewFake()
	f.AfterFunc(1, func() {})
	testwait.BlockUntil(t, f, 1)
	if testwait.Context(t).Err() != nil {
		t.Error("Context is done at once")
	}
	ran := false
	testwait.Bubble(t, func(t *testing.T) { ran = true })
	if !ran {
		t.Error("Bubble did not run f")
	}
}

// fatalTB records the message of Fatalf and stops the goroutine, as
// t.Fatalf does, by a panic.
type fatalTB struct {
	testing.TB
	msg *string
}

func (f fatalTB) Helper() {}
func (f fatalTB) Fatalf(format string, args ...any) {
	*f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}

func TestRecvForFailsWithAMessage(t *testing.T) {
	var msg string
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		testwait.RecvFor(fatalTB{t, &msg}, make(chan int), 1, "a value that never comes")
	}()
	<-done
	if msg != "waited 1ns for a value that never comes" {
		t.Errorf("RecvFor failed with %q", msg)
	}
}
