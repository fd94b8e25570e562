package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// A limiter's calls return on a clock that moves forward and back: Acquire,
// Done, the Done that ends a window and sets the next limit. The calls run
// in a goroutine, and the test fails, rather than hangs, if they do not
// return (2s is only a bound for failure: they take microseconds), with a
// panic that ends the test binary. Its
// file sorts before every other test of the package that reads a fake
// clock, so that it runs first.
func TestCallsOnAFakeClockReturn(t *testing.T) {
	fake := clock.NewFake()
	grow := &recorder{next: func(l float64, _ adaptive.Window) float64 { return l + 5 }}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(grow), adaptive.WithInitial(10), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
	done := make(chan error, 1)
	go func() {
		for range 3 {
			ps := make([]*adaptive.Permit, 10)
			for i := range ps {
				ps[i] = new(adaptive.Permit)
				var err error
				if *ps[i], err = lim.Acquire(context.Background()); err != nil {
					done <- err
					return
				}
			}
			fake.Advance(time.Millisecond)
			for _, p := range ps {
				p.Done(nil)
			}
			fake.Advance(time.Second)
			if err := call(lim, fake, time.Millisecond, nil); err != nil { // ends the window
				done <- err
				return
			}
		}
		fake.Set(fake.Now().Add(-time.Minute)) // a step back
		done <- call(lim, fake, time.Millisecond, nil)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a call was refused: %v", err)
		}
	case <-time.After(2 * time.Second):
		// A panic, not t.Fatal: the calls spin, and so would every later
		// test and example that reads the clock; go test's -failfast does
		// not stop the examples.
		panic("adaptive: the calls on a fake clock did not return after 2s")
	}
	if got := len(grow.windows); got != 3 {
		t.Errorf("%d windows ended, want 3", got)
	}
	if got := lim.Stats().Limit; got != 25 {
		t.Errorf("limit %d after 3 windows of an algorithm adding 5 to 10, want 25", got)
	}
}
