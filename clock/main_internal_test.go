package clock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// TestMain runs on the program's main goroutine, goroutine 1, which no
// test function runs on: the checks that the Fake's re-entry guard holds
// there too run here, before the tests.
func TestMain(m *testing.M) {
	if err := mainGoroutineChecks(); err != nil {
		fmt.Fprintln(os.Stderr, "clock: on the main goroutine:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func mainGoroutineChecks() error {
	var buf [64]byte
	if id := goid(&buf); id != 1 {
		return fmt.Errorf("TestMain runs on goroutine %d, want 1", id)
	}
	// After an Advance or AdvanceNext that ran a callback here, a Sleep
	// here blocks and returns as any other.
	for _, move := range []struct {
		name string
		f    func(*Fake)
	}{
		{"Advance", func(f *Fake) { f.Advance(0) }},
		{"AdvanceNext", func(f *Fake) { f.AdvanceNext() }},
	} {
		f := NewFake()
		f.AfterFunc(0, func() {})
		move.f(f)
		if err := sleepWhileAnotherAdvances(f); err != nil {
			return fmt.Errorf("Sleep after an %s that ran a callback: %w", move.name, err)
		}
	}
	// A callback running here that calls a Sleep that would block panics.
	f := NewFake()
	var got any
	f.AfterFunc(0, func() {
		defer func() { got = recover() }()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_ = f.Sleep(ctx, time.Second)
	})
	f.Advance(0)
	if msg, _ := got.(string); len(msg) < 12 || msg[:12] != "clock: Sleep" {
		return fmt.Errorf("Sleep from a callback: recovered %#v, want the re-entry panic", got)
	}
	return nil
}

// sleepWhileAnotherAdvances sleeps 1s on f while another goroutine
// advances f once the Sleep's timer is armed.
func sleepWhileAnotherAdvances(f *Fake) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	// A bound for failure only (the steps take microseconds), well below a
	// mutation run's timeout: a Fake that never arms or never fires the
	// Sleep's timer fails the run within seconds instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	moved := make(chan error, 1)
	go func() {
		if err := f.BlockUntil(ctx, 1); err != nil {
			moved <- err
			return
		}
		f.Advance(time.Second)
		moved <- nil
	}()
	if err := f.Sleep(ctx, time.Second); err != nil {
		return err
	}
	if err := <-moved; err != nil {
		return errors.New("the timer of the Sleep was never armed")
	}
	return nil
}
