package ratelimit_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// A wait exactly as long as MaxWait is not longer than it: WaitN takes the
// token and waits, here the shortest MaxWait there is, 1ns.
func TestWaitOfExactlyMaxWait(t *testing.T) {
	clk := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(10*time.Nanosecond), 1, ratelimit.WithClock(clk), ratelimit.WithMaxWait(time.Nanosecond))
	if !l.Allow() {
		t.Fatal("Allow refused on a full bucket")
	}
	clk.Advance(9 * time.Nanosecond) // the next token comes in 1ns
	done := make(chan error, 1)
	go func() { done <- l.Wait(context.Background()) }()
	ctx, cancel := context.WithCancel(context.Background())
	blocked := make(chan error, 1)
	go func() { blocked <- clk.BlockUntil(ctx, 1) }()
	select {
	case err := <-done:
		cancel()
		<-blocked
		t.Fatalf("Wait returned %v at once, want it to wait the 1ns MaxWait allows", err)
	case <-blocked:
	}
	cancel()
	clk.Advance(time.Nanosecond)
	if err := <-done; err != nil {
		t.Errorf("Wait = %v after its 1ns, want nil", err)
	}
}

// deadlineHook is a context whose Deadline runs hook first: WaitN reads the
// deadline after it has checked ctx and the burst, before it takes the
// tokens, so hook acts between the two.
type deadlineHook struct {
	context.Context
	hook func()
}

func (c deadlineHook) Deadline() (time.Time, bool) {
	c.hook()
	return c.Context.Deadline()
}

// A limiter whose rate is set to +Inf while WaitN reckons its wait admits
// the event at once, without waiting: here the caller also gives up at
// that moment, and WaitN, which had nothing to wait for, still returns nil.
func TestWaitRateSetToInfWhileReckoning(t *testing.T) {
	clk := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Hour), 1, ratelimit.WithClock(clk))
	if !l.Allow() {
		t.Fatal("Allow refused on a full bucket")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	hooked := deadlineHook{ctx, func() {
		if calls++; calls == 1 {
			l.SetRate(math.Inf(1))
			cancel()
		}
	}}
	if err := l.Wait(hooked); err != nil {
		t.Errorf("Wait = %v (context.Canceled: %v), want nil: at +Inf there is no wait", err, errors.Is(err, context.Canceled))
	}
	if calls != 1 {
		t.Fatalf("Deadline read %d times, want 1", calls)
	}
}
