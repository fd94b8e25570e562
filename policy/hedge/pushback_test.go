package hedge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// pushback is an attempt's error that carries a Retry-After hint, as an
// HTTP 429 with a Retry-After header does.
type pushback struct{ after time.Duration }

func (p pushback) Error() string             { return "429 too many requests" }
func (p pushback) RetryAfter() time.Duration { return p.after }

// Regression: an attempt that failed at once with a Retry-After hint
// started the next one at once: a 429 with Retry-After: 30s and MaxHedges
// 3 made 4 requests in no time. The next attempt now starts no earlier than
// the hint (gRFC A6: "send next hedged request in n ms"), and the attempts
// after it resume at the delay. (MaxWait is Off here: each hint is waited
// for; TestHintPastMaxWaitStopsFurtherAttempts has the cap.)
func TestHintDelaysTheNextAttempt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delay  time.Duration
		steps  []step
		starts []time.Duration
		v      int
		err    error // matched with errors.Is; nil: Do succeeds
	}{
		{"every attempt pushed back", 50 * ms,
			[]step{{err: pushback{30 * time.Second}}, {err: pushback{30 * time.Second}}, {err: pushback{30 * time.Second}}, {err: pushback{30 * time.Second}}},
			[]time.Duration{0, 30 * time.Second, 60 * time.Second, 90 * time.Second}, 0, pushback{30 * time.Second}},
		{"hedges resume at the delay after the hinted one", 50 * ms,
			[]step{{d: time.Second, v: 0}, {d: 10 * ms, err: pushback{200 * ms}}, {d: time.Second, v: 2}, {d: time.Second, v: 3}},
			[]time.Duration{0, 50 * ms, 260 * ms, 310 * ms}, 0, nil},
		{"a failure without a hint does not cut the wait short", 50 * ms,
			[]step{{d: 100 * ms, err: errA}, {d: 10 * ms, err: pushback{200 * ms}}, {d: 10 * ms, v: 2}},
			[]time.Duration{0, 50 * ms, 260 * ms}, 2, nil},
		{"a later failure's shorter hint keeps the longer one", 50 * ms,
			[]step{{d: 60 * ms, err: pushback{20 * ms}}, {d: 5 * ms, err: pushback{200 * ms}}, {d: 10 * ms, v: 2}},
			[]time.Duration{0, 50 * ms, 255 * ms}, 2, nil},
		{"a later failure's longer hint replaces the shorter one", 50 * ms,
			[]step{{d: 60 * ms, err: pushback{200 * ms}}, {d: 5 * ms, err: pushback{20 * ms}}, {d: 10 * ms, v: 2}},
			[]time.Duration{0, 50 * ms, 260 * ms}, 2, nil},
		{"a hint of 1ns is waited", 50 * ms,
			[]step{{d: 10 * ms, err: pushback{1}}, {d: 10 * ms, v: 1}},
			[]time.Duration{0, 10*ms + 1}, 1, nil},
		{"a zero hint starts the next at once", 50 * ms,
			[]step{{d: 10 * ms, err: pushback{0}}, {d: 10 * ms, v: 1}},
			[]time.Duration{0, 10 * ms}, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubbleWithin(t, func(t *testing.T) {
				l := newLog(tc.steps...)
				v, err := hedge.New[int](tc.delay, hedge.WithMaxHedges(3), hedge.WithMaxWait(resilience.Off)).Do(context.Background(), l.op)
				if diff := cmp.Diff(tc.starts, l.started); diff != "" {
					t.Errorf("%s: start times mismatch (-want +got):\n%s", tc.name, diff)
				}
				switch {
				case tc.err == nil && (err != nil || v != tc.v):
					t.Errorf("%s: Do = %d, %v; want %d, nil", tc.name, v, err, tc.v)
				case tc.err != nil && !errors.Is(err, tc.err):
					t.Errorf("%s: Do = %d, %v; want an error matching %v", tc.name, v, err, tc.err)
				}
			})
		})
	}
}

// An attempt refused with a hint of Never, with nothing else running,
// ends the call at once: the policy does not wait for it. On a fake clock
// that nobody advances, waiting for it would never end: the call runs
// under a bound, for failure only (with a panic, which ends the test
// binary: the tests and examples after this one would wait as well).
func TestNeverHintEndsTheCallAtOnce(t *testing.T) {
	p := hedge.New[int](50*ms, hedge.WithMaxHedges(3), hedge.WithMaxWait(resilience.Off), hedge.WithClock(clock.NewFake()))
	done := make(chan error, 1)
	go func() {
		_, err := p.Do(context.Background(), func(context.Context) (int, error) { return 0, pushback{resilience.Never} })
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, pushback{resilience.Never}) {
			t.Errorf("Do = %v, want an error matching the refusal", err)
		}
	case <-time.After(2 * time.Second):
		panic(t.Name() + ": Do did not return within 2s of a refusal with a hint of Never")
	}
}

// A "never" hint (resilience.Never) stops further attempts (gRFC A6:
// "don't send any more hedged requests"); the ones running go on. So does
// a hint that ends past the caller's deadline: no attempt could start in
// time, even with MaxWait Off.
func TestNeverHintStopsFurtherAttempts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deadline time.Duration // of the caller's context, if > 0
		steps    []step
		starts   []time.Duration
		returned time.Duration
		v        int
		err      error
	}{
		{"never, nothing running", 0,
			[]step{{d: 10 * ms, err: pushback{resilience.Never}}, {v: 1}},
			[]time.Duration{0}, 10 * ms, 0, pushback{resilience.Never}},
		{"never, the first attempt runs on and wins", 0,
			[]step{{d: time.Second, v: 7}, {d: 10 * ms, err: pushback{resilience.Never}}, {v: 2}},
			[]time.Duration{0, 50 * ms}, time.Second, 7, nil},
		{"a hint past the caller's deadline", 10 * time.Second,
			[]step{{d: 10 * ms, err: pushback{30 * time.Second}}, {v: 1}},
			[]time.Duration{0}, 10 * ms, 0, pushback{30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubbleWithin(t, func(t *testing.T) {
				ctx := context.Background()
				if tc.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.deadline)
					defer cancel()
				}
				l := newLog(tc.steps...)
				start := time.Now()
				v, err := hedge.New[int](50*ms, hedge.WithMaxHedges(3), hedge.WithMaxWait(resilience.Off)).Do(ctx, l.op)
				if got := time.Since(start); got != tc.returned {
					t.Errorf("%s: returned after %v, want %v", tc.name, got, tc.returned)
				}
				if diff := cmp.Diff(tc.starts, l.started); diff != "" {
					t.Errorf("%s: start times mismatch (-want +got):\n%s", tc.name, diff)
				}
				switch {
				case tc.err == nil && (err != nil || v != tc.v):
					t.Errorf("%s: Do = %d, %v; want %d, nil", tc.name, v, err, tc.v)
				case tc.err != nil && !errors.Is(err, tc.err):
					t.Errorf("%s: Do = %d, %v; want an error matching %v", tc.name, v, err, tc.err)
				}
				time.Sleep(time.Minute) // no attempt starts after the call
				if len(l.started) != len(tc.starts) {
					t.Errorf("%s: %d attempts started by a minute after the call, want %d", tc.name, len(l.started), len(tc.starts))
				}
			})
		})
	}
}

// While the next attempt waits out a hint and no attempt runs, the call
// still ends when the caller's context does (MaxWait Off: a hint of 30s
// is waited for).
func TestCallerCancelsDuringHintedWait(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(time.Second, cancel)
		l := newLog(step{err: pushback{30 * time.Second}}, step{v: 1})
		start := time.Now()
		_, err := hedge.New[int](50*ms, hedge.WithMaxWait(resilience.Off)).Do(ctx, l.op)
		if got := time.Since(start); got != time.Second {
			t.Errorf("returned after %v, want 1s (when the caller cancelled)", got)
		}
		if !errors.Is(err, context.Canceled) || !errors.Is(err, pushback{30 * time.Second}) {
			t.Errorf("err = %v, want it to match context.Canceled and the attempt's error", err)
		}
		time.Sleep(time.Minute)
		if len(l.started) != 1 {
			t.Errorf("%d attempts started, want 1", len(l.started))
		}
	})
}

// The hint is waited on the policy's clock.
func TestHintOnTheFakeClock(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		clk := clock.NewFake()
		calls := 0
		p := hedge.New[int](50*ms, hedge.WithClock(clk), hedge.WithMaxWait(time.Minute))
		done := make(chan error, 1)
		go func() {
			_, err := p.Do(context.Background(), func(context.Context) (int, error) {
				calls++
				if calls == 1 {
					return 0, pushback{30 * time.Second}
				}
				return calls, nil
			})
			done <- err
		}()
		synctest.Wait() // the first attempt has failed; the call waits
		clk.Advance(30*time.Second - time.Nanosecond)
		synctest.Wait()
		if calls != 1 {
			t.Fatalf("%d attempts started before the hint's 30s had passed on the clock, want 1", calls)
		}
		clk.Advance(time.Nanosecond)
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil || calls != 2 {
				t.Errorf("Do = %v after %d attempts, want the second attempt's success", err, calls)
			}
		default:
			t.Fatal("Do has not returned once the hint had passed and the second attempt succeeded")
		}
	})
}

// hintCase is one call of a hedge policy: its attempts do steps, and the
// call must start them at starts, return at returned (from its start) and
// return v, nil or, if err is set, an error matching err.
type hintCase struct {
	name     string
	opts     []hedge.Option // after WithMaxHedges(3)
	steps    []step
	starts   []time.Duration
	returned time.Duration
	v        int
	err      error
}

// runHintCases runs each case with a delay of 50ms in a synctest bubble,
// and checks that no attempt starts in the minute after the call.
func runHintCases(t *testing.T, cases []hintCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bubbleWithin(t, func(t *testing.T) {
				l := newLog(tc.steps...)
				start := time.Now()
				opts := append([]hedge.Option{hedge.WithMaxHedges(3)}, tc.opts...)
				v, err := hedge.New[int](50*ms, opts...).Do(context.Background(), l.op)
				if got := time.Since(start); got != tc.returned {
					t.Errorf("%s: returned after %v, want %v", tc.name, got, tc.returned)
				}
				if diff := cmp.Diff(tc.starts, l.started); diff != "" {
					t.Errorf("%s: start times mismatch (-want +got):\n%s", tc.name, diff)
				}
				switch {
				case tc.err == nil && (err != nil || v != tc.v):
					t.Errorf("%s: Do = %d, %v; want %d, nil", tc.name, v, err, tc.v)
				case tc.err != nil && !errors.Is(err, tc.err):
					t.Errorf("%s: Do = %d, %v; want an error matching %v", tc.name, v, err, tc.err)
				}
				time.Sleep(time.Minute) // no attempt starts after the call
				if len(l.started) != len(tc.starts) {
					t.Errorf("%s: %d attempts started by a minute after the call, want %d", tc.name, len(l.started), len(tc.starts))
				}
			})
		})
	}
}

// Regression: nothing bounded the wait for a hint: a 503 with Retry-After:
// 3 made a hedged call of 50ms a 3s call, and Retry-After: 1000 blocked it
// for 16 minutes. A hint waits at most MaxWait (by default the delay); a
// longer one stops further attempts, and the call returns as soon as no
// attempt runs.
func TestHintPastMaxWaitStopsFurtherAttempts(t *testing.T) {
	runHintCases(t, []hintCase{
		{name: "Retry-After 3s, the default MaxWait (the delay)",
			steps:  []step{{d: 10 * ms, err: pushback{3 * time.Second}}, {v: 1}},
			starts: []time.Duration{0}, returned: 10 * ms, err: pushback{3 * time.Second}},
		{name: "Retry-After 1000s",
			steps:  []step{{d: 10 * ms, err: pushback{1000 * time.Second}}, {v: 1}},
			starts: []time.Duration{0}, returned: 10 * ms, err: pushback{1000 * time.Second}},
		{name: "a hint of MaxWait is waited",
			steps:  []step{{d: 10 * ms, err: pushback{50 * ms}}, {v: 1}},
			starts: []time.Duration{0, 60 * ms}, returned: 60 * ms, v: 1},
		{name: "a hint just past MaxWait",
			steps:  []step{{d: 10 * ms, err: pushback{50*ms + 1}}, {v: 1}},
			starts: []time.Duration{0}, returned: 10 * ms, err: pushback{50*ms + 1}},
		{name: "a MaxWait of 5s waits 3s", opts: []hedge.Option{hedge.WithMaxWait(5 * time.Second)},
			steps:  []step{{d: 10 * ms, err: pushback{3 * time.Second}}, {v: 1}},
			starts: []time.Duration{0, 3010 * ms}, returned: 3010 * ms, v: 1},
		{name: "a hint of exactly MaxWait 5s is waited", opts: []hedge.Option{hedge.WithMaxWait(5 * time.Second)},
			steps:  []step{{d: 10 * ms, err: pushback{5 * time.Second}}, {v: 1}},
			starts: []time.Duration{0, 5010 * ms}, returned: 5010 * ms, v: 1},
		{name: "Config.MaxWait 5s", opts: []hedge.Option{hedge.WithConfig(hedge.Config[int]{MaxWait: 5 * time.Second})},
			steps:  []step{{d: 10 * ms, err: pushback{3 * time.Second}}, {v: 1}},
			starts: []time.Duration{0, 3010 * ms}, returned: 3010 * ms, v: 1},
		{name: "a Config without MaxWait keeps an earlier one", opts: []hedge.Option{hedge.WithMaxWait(5 * time.Second), hedge.WithConfig(hedge.Config[int]{MaxHedges: 2})},
			steps:  []step{{d: 10 * ms, err: pushback{3 * time.Second}}, {v: 1}},
			starts: []time.Duration{0, 3010 * ms}, returned: 3010 * ms, v: 1},
		{name: "MaxWait Off waits any hint", opts: []hedge.Option{hedge.WithMaxWait(resilience.Off)},
			steps:  []step{{d: 10 * ms, err: pushback{1000 * time.Second}}, {v: 1}},
			starts: []time.Duration{0, 1000*time.Second + 10*ms}, returned: 1000*time.Second + 10*ms, v: 1},
		{name: "the attempt in flight runs on and wins",
			steps:  []step{{d: time.Second, v: 7}, {d: 10 * ms, err: pushback{3 * time.Second}}, {v: 2}},
			starts: []time.Duration{0, 50 * ms}, returned: time.Second, v: 7},
		{name: "a hint past MaxWait ends the wait for an earlier hint",
			steps:  []step{{d: 70 * ms, err: pushback{3 * time.Second}}, {d: 10 * ms, err: pushback{40 * ms}}, {v: 2}},
			starts: []time.Duration{0, 50 * ms}, returned: 70 * ms, err: pushback{40 * ms}},
	})
}

// errOpen stands for a guard's sentinel, such as breaker.ErrOpen.
var errOpen = fmt.Errorf("breaker: open: %w", resilience.ErrRefused)

// refused is the refusal of an inner guard (the dependency was not called)
// with a hint, or none if after < 0.
func refused(after time.Duration) error { return resilience.Refuse(errOpen, "dep", after) }

// Regression: behind an open breaker, the recommended order (retry > hedge
// > breaker) made every call wait out the cooldown: the hedge took the
// refusal's RetryAfter (the cooldown left) as pushback and held the call
// until it ended. A refusal of an inner guard, whatever its hint, starts no
// further attempt: another one would be refused as well.
func TestRefusalStopsFurtherAttempts(t *testing.T) {
	off := []hedge.Option{hedge.WithMaxWait(resilience.Off)}
	runHintCases(t, []hintCase{
		{name: "an open breaker's cooldown, nothing else running",
			steps:  []step{{err: refused(3 * time.Second)}, {v: 1}},
			starts: []time.Duration{0}, returned: 0, err: errOpen},
		{name: "an open breaker's cooldown, MaxWait Off", opts: off,
			steps:  []step{{err: refused(3 * time.Second)}, {v: 1}},
			starts: []time.Duration{0}, returned: 0, err: errOpen},
		{name: "a short hint, within MaxWait",
			steps:  []step{{err: refused(10 * ms)}, {v: 1}},
			starts: []time.Duration{0}, returned: 0, err: errOpen},
		{name: "a refusal without a hint (a full bulkhead)",
			steps:  []step{{err: refused(-1)}, {v: 1}},
			starts: []time.Duration{0}, returned: 0, err: errOpen},
		{name: "a wrapped refusal",
			steps:  []step{{err: fmt.Errorf("attempt: %w", refused(0))}, {v: 1}},
			starts: []time.Duration{0}, returned: 0, err: errOpen},
		{name: "a refused hedge: the first attempt runs on and wins",
			steps:  []step{{d: time.Second, v: 7}, {err: refused(-1)}, {v: 2}},
			starts: []time.Duration{0, 50 * ms}, returned: time.Second, v: 7},
	})
}
