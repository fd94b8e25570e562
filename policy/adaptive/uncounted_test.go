package adaptive_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// steady drives lim on fake for d of virtual time: every 100ms it admits
// perTick calls, each with a context of its own, and ends each one
// lifetime after its admission with end(ctx's cancel, the permit). It
// returns how many calls were refused.
func steady(t *testing.T, lim *adaptive.Limiter, fake *clock.Fake, d, lifetime time.Duration, perTick int,
	end func(cancel context.CancelFunc, ctx context.Context, p *adaptive.Permit)) (refused int) {
	t.Helper()
	type live struct {
		at     time.Duration
		ctx    context.Context
		cancel context.CancelFunc
		p      *adaptive.Permit
	}
	const tick = 100 * time.Millisecond
	var calls []live
	for now := time.Duration(0); now < d; now += tick {
		for len(calls) > 0 && calls[0].at <= now {
			c := calls[0]
			calls = calls[1:]
			end(c.cancel, c.ctx, c.p)
		}
		for range perTick {
			ctx, cancel := context.WithCancel(context.Background())
			p := new(adaptive.Permit)
			var err error
			if *p, err = lim.Acquire(ctx); err != nil {
				cancel()
				refused++
				continue
			}
			calls = append(calls, live{now + lifetime, ctx, cancel, p})
		}
		fake.Advance(tick)
	}
	for _, c := range calls {
		end(c.cancel, c.ctx, c.p)
	}
	return refused
}

// Callers that all give up after 500ms (they cancel their context, and
// the call returns context.Canceled) say nothing about the dependency:
// for a minute of them the limit stays where it was, in every algorithm.
// Windows still end (at 10 × Window), but none is read as a stall, for
// calls did end in them.
func TestCancelledCallsDoNotMoveTheLimit(t *testing.T) {
	for _, a := range algorithms {
		fake := clock.NewFake()
		rec := &recorder{next: a.alg.Next}
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithInitial(24))
		steady(t, lim, fake, time.Minute, 500*time.Millisecond, 5, func(cancel context.CancelFunc, ctx context.Context, p *adaptive.Permit) {
			cancel()
			p.Done(ctx.Err())
		})
		if got := lim.Stats().Limit; got != 24 {
			t.Errorf("%s: after a minute of callers that all cancel after 500ms: limit %d, want it unchanged at 24", a.name, got)
		}
		if len(rec.windows) < 5 {
			t.Errorf("%s: %d windows ended in a minute, want at least 5 (one per 10 × Window)", a.name, len(rec.windows))
		}
		for i, w := range rec.windows {
			if w.Successes+w.Drops != 0 {
				t.Fatalf("%s: window %d counted %d successes and %d drops, want none: cancelled calls are not counted", a.name, i+1, w.Successes, w.Drops)
			}
		}
	}
}

// innerRefusal is what an inner guard (a breaker, a rate limiter) returns
// when it refuses a call: the dependency was not called.
var innerRefusal = resilience.Refuse(adaptive.ErrFull, "inner", -1)

// An inner guard that refuses every call says nothing about the
// dependency: a minute of it leaves the limit at 200.
func TestInnerRefusalsDoNotMoveTheLimit(t *testing.T) {
	for _, a := range algorithms {
		fake := clock.NewFake()
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(a.alg), adaptive.WithInitial(200))
		steady(t, lim, fake, time.Minute, 100*time.Millisecond, 20, func(cancel context.CancelFunc, _ context.Context, p *adaptive.Permit) {
			p.Done(innerRefusal)
			cancel()
		})
		if got := lim.Stats().Limit; got != 200 {
			t.Errorf("%s: after a minute of calls all refused by an inner guard: limit %d, want it unchanged at 200", a.name, got)
		}
	}
}

// A call that fails after its caller's context ended is not counted,
// whatever its error: the caller gave up or its deadline passed. With the
// caller's context live, the same errors are failures.
func TestFailureAfterTheCallerGaveUpIsNotCounted(t *testing.T) {
	for _, err := range []error{context.DeadlineExceeded, errors.New("503")} {
		for _, gaveUp := range []bool{true, false} {
			fake := clock.NewFake()
			rec := &recorder{}
			lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
			ctx, cancel := context.WithCancel(context.Background())
			p, aerr := lim.Acquire(ctx)
			if aerr != nil {
				t.Fatal(aerr)
			}
			fake.Advance(11 * time.Second) // the next call to end ends the window
			if gaveUp {
				cancel()
			}
			p.Done(err)
			cancel()
			if err := call(lim, fake, 0, context.Canceled); err != nil { // not counted; ends the window at 10 × Window
				t.Fatal(err)
			}
			want := adaptive.Window{Drops: 1}
			if gaveUp {
				want = adaptive.Window{}
			}
			if len(rec.windows) != 1 {
				t.Fatalf("Done(%v), caller gave up %v: %d windows ended, want 1", err, gaveUp, len(rec.windows))
			}
			got := rec.windows[0]
			got.Duration, got.MaxInFlight, got.Baseline = 0, 0, 0
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Done(%v), caller gave up %v: window mismatch (-want +got):\n%s", err, gaveUp, diff)
			}
		}
	}
}

// Through Policy, in a synctest bubble (virtual time, on which the
// limiter's real clock and context deadlines run): 30 callers, each with a
// deadline of 500ms on a dependency that never answers in time. Their
// calls end with context.DeadlineExceeded, the caller's own: for a minute
// the limit stays where it was. (With a timeout inside the limiter, the
// same calls would be failures: see TestFailureAfterTheCallerGaveUpIsNotCounted.)
func TestCallerDeadlinesDoNotMoveTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := adaptive.New(adaptive.WithInitial(24))
		p := adaptive.Policy[int](lim)
		hang := func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		}
		start := time.Now()
		var wg sync.WaitGroup
		for range 30 {
			wg.Go(func() {
				for time.Since(start) < time.Minute {
					ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
					if _, err := p.Do(ctx, hang); errors.Is(err, resilience.ErrRefused) {
						time.Sleep(100 * time.Millisecond)
					}
					cancel()
				}
			})
		}
		wg.Wait()
		if got := lim.Stats().Limit; got != 24 {
			t.Errorf("after a minute of callers whose 500ms deadlines all passed: limit %d, want it unchanged at 24", got)
		}
	})
}
