package timeout_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// Regression: on a clock.Fake the op's ctx.Deadline() was the timeout's
// own even when the caller's deadline was earlier (the real clock reports
// the earlier one).
func TestFakeClockDeadlineIsTheEarlierOne(t *testing.T) {
	clk := clock.NewFake()
	var got time.Time
	p := resilience.Then(timeout.New[int](time.Second, timeout.WithClock(clk)), timeout.New[int](time.Hour, timeout.WithClock(clk)))
	_, _ = p.Do(context.Background(), func(ctx context.Context) (int, error) {
		got, _ = ctx.Deadline()
		return 0, nil
	})
	if want := clk.Now().Add(time.Second); !got.Equal(want) {
		t.Errorf("inner deadline %v, want the outer's %v", got, want)
	}
	// A later parent deadline does not stretch the timeout's own.
	p = resilience.Then(timeout.New[int](time.Hour, timeout.WithClock(clk)), timeout.New[int](time.Second, timeout.WithClock(clk)))
	_, _ = p.Do(context.Background(), func(ctx context.Context) (int, error) {
		got, _ = ctx.Deadline()
		return 0, nil
	})
	if want := clk.Now().Add(time.Second); !got.Equal(want) {
		t.Errorf("inner deadline %v, want its own %v", got, want)
	}
}

// Regression: on a clock.Fake, contexts derived from the op's ctx reported
// context.Canceled after the timeout expired, where the real clock gives
// context.DeadlineExceeded.
func TestFakeClockDerivedContextsSeeDeadlineExceeded(t *testing.T) {
	clk := clock.NewFake()
	type seen struct{ child, grandchild, afterFunc, cause error }
	done := make(chan seen)
	go func() {
		_, _ = timeout.New[int](time.Second, timeout.WithClock(clk)).Do(context.Background(), func(ctx context.Context) (int, error) {
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			grandchild, cancel2 := context.WithTimeout(child, time.Hour)
			defer cancel2()
			fired := make(chan error, 1)
			stop := context.AfterFunc(ctx, func() { fired <- ctx.Err() })
			defer stop()
			<-grandchild.Done()
			done <- seen{child: child.Err(), grandchild: grandchild.Err(), afterFunc: <-fired, cause: context.Cause(child)}
			return 0, ctx.Err()
		})
	}()
	blockUntil(t, clk, 1)
	clk.Advance(time.Second)
	s := recv(t, done, "what the op's derived contexts saw")
	if s.child != context.DeadlineExceeded || s.grandchild != context.DeadlineExceeded || s.afterFunc != context.DeadlineExceeded {
		t.Errorf("derived contexts' Err: child %v, grandchild %v, AfterFunc saw %v; want context.DeadlineExceeded for all", s.child, s.grandchild, s.afterFunc)
	}
	if !errors.Is(s.cause, timeout.ErrTimeout) {
		t.Errorf("context.Cause(child) = %v, want the timeout's error", s.cause)
	}
}
