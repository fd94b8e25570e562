package retry_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// sleeper is a clock whose Sleep does not block: it records the wait and
// advances the fake time by it, so a retry loop runs synchronously in the
// test's goroutine. It bounds the loop, for failure only: past maxSleeps
// waits (far more than any test makes) it panics, so that a loop that
// never ends fails its test instead of hanging it.
type sleeper struct {
	*clock.Fake
	slept []time.Duration
	late  int // calls of Sleep with a context already done
}

func newSleeper() *sleeper { return &sleeper{Fake: clock.NewFake()} }

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		s.late++
		return err
	}
	if len(s.slept) == maxSleeps {
		panic("sleeper: a retry loop waited " + strconv.Itoa(maxSleeps) + " times: it does not end")
	}
	s.slept = append(s.slept, d)
	s.Advance(d)
	return nil
}

const maxSleeps = 100_000

// script is an op that returns the results in errs, one per call (nil =
// success with value 100+call number), and counts its calls.
type script struct {
	errs  []error
	calls int
}

func (s *script) op(ctx context.Context) (int, error) {
	s.calls++
	if s.calls > len(s.errs) {
		return 100 + s.calls, nil
	}
	return s.calls, s.errs[s.calls-1]
}

var errBoom = errors.New("boom")

// cancelling returns op that calls cancel before it returns: the caller
// gives up during the attempt. (A context done before the call runs no
// attempt at all.)
func cancelling(op func(context.Context) (int, error), cancel context.CancelFunc) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		defer cancel()
		return op(ctx)
	}
}

// hinted is an error that asks for a wait, like an HTTP 503 with Retry-After.
type hinted struct{ d time.Duration }

func (h hinted) Error() string             { return fmt.Sprintf("unavailable, retry after %v", h.d) }
func (h hinted) RetryAfter() time.Duration { return h.d }

func fails(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

func TestDefaults(t *testing.T) {
	clk := newSleeper()
	s := &script{errs: fails(10, errBoom)}
	v, err := retry.New[int](retry.WithClock(clk)).Do(context.Background(), s.op)
	if s.calls != 3 {
		t.Errorf("calls = %d, want 3 (default attempts)", s.calls)
	}
	var re *retry.Error
	if !errors.As(err, &re) || re.Attempts != 3 || v != 3 {
		t.Fatalf("Do = %d, %v; want the last attempt's 3 and a *retry.Error with 3 attempts", v, err)
	}
	if len(clk.slept) != 2 {
		t.Fatalf("slept %v, want 2 waits", clk.slept)
	}
	for i, d := range clk.slept {
		if hi := 100 * time.Millisecond << i; d < 0 || d > hi {
			t.Errorf("wait %d = %v, want full jitter within [0, %v]", i+1, d, hi)
		}
	}
	if got := retry.New[int]().String(); got != "retry" {
		t.Errorf("String() = %q, want %q", got, "retry")
	}
}

func TestSuccessAfterFailuresReturnsSuccess(t *testing.T) {
	s := &script{errs: fails(2, errBoom)}
	v, err := retry.New[int](retry.WithClock(newSleeper())).Do(context.Background(), s.op)
	if v != 103 || err != nil || s.calls != 3 {
		t.Fatalf("Do = %d, %v after %d calls; want 103, nil after 3", v, err, s.calls)
	}
}

func TestAttempts(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		s := &script{errs: fails(10, errBoom)}
		_, err := retry.New[int](retry.WithAttempts(n), retry.WithClock(newSleeper())).Do(context.Background(), s.op)
		if s.calls != n {
			t.Errorf("WithAttempts(%d): %d calls", n, s.calls)
		}
		want := fmt.Sprintf("retry: gave up after %d attempt", n)
		if n > 1 {
			want += "s"
		}
		if want += ": boom"; err == nil || err.Error() != want {
			t.Errorf("WithAttempts(%d): err = %v, want %q", n, err, want)
		}
	}
}

func TestUnlimitedAttemptsStopAtMaxElapsed(t *testing.T) {
	clk := newSleeper()
	s := &script{errs: fails(1000, errBoom)}
	p := retry.New[int](retry.WithAttempts(resilience.Off), retry.WithMaxElapsed(time.Second),
		retry.WithBackoff(backoff.Constant(300*time.Millisecond)), retry.WithClock(clk))
	_, err := p.Do(context.Background(), s.op)
	// Waits end at 300, 600 and 900 ms; a fourth would end at 1.2 s.
	if s.calls != 4 {
		t.Errorf("calls = %d, want 4", s.calls)
	}
	if diff := cmp.Diff([]time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}, clk.slept); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
	want := "retry: gave up after 4 attempts (a wait of 300ms would pass MaxElapsed 1s): boom"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestMaxElapsedCountsAttemptTime(t *testing.T) {
	clk := newSleeper()
	calls := 0
	op := func(context.Context) (int, error) {
		calls++
		clk.Advance(400 * time.Millisecond) // each attempt takes 400 ms
		return 0, errBoom
	}
	p := retry.New[int](retry.WithAttempts(10), retry.WithMaxElapsed(time.Second),
		retry.WithBackoff(backoff.Constant(100*time.Millisecond)), retry.WithClock(clk))
	_, _ = p.Do(context.Background(), op)
	// Attempt 1 ends at 400 ms, wait to 500; attempt 2 ends at 900, and a
	// wait to 1000 ms ends exactly at MaxElapsed; attempt 3 ends at 1.4 s.
	if calls != 3 {
		t.Errorf("calls = %d, want 3", calls)
	}
	if got := clk.Now().Sub(clock.NewFake().Now()); got != 1400*time.Millisecond {
		t.Errorf("elapsed %v, want 1.4s", got)
	}
}

func TestBackoffDelaysAreUsedInOrder(t *testing.T) {
	clk := newSleeper()
	s := &script{errs: fails(10, errBoom)}
	p := retry.New[int](retry.WithAttempts(5), retry.WithClock(clk),
		retry.WithBackoff(backoff.Linear(10*time.Millisecond, 5*time.Millisecond, time.Second)))
	_, _ = p.Do(context.Background(), s.op)
	want := []time.Duration{10 * time.Millisecond, 15 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond}
	if diff := cmp.Diff(want, clk.slept); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
	// A second execution starts a fresh sequence.
	clk.slept = nil
	s.calls = 0
	_, _ = p.Do(context.Background(), s.op)
	if diff := cmp.Diff(want, clk.slept); diff != "" {
		t.Errorf("second execution: waits mismatch (-want +got):\n%s", diff)
	}
}

func TestRetryIf(t *testing.T) {
	errRetryable := errors.New("retryable")
	p := retry.New[int](retry.WithClock(newSleeper()), retry.WithBackoff(backoff.Constant(0)),
		retry.WithRetryIf(func(err error) bool { return errors.Is(err, errRetryable) }))
	s := &script{errs: []error{errRetryable, errBoom}}
	_, err := p.Do(context.Background(), s.op)
	if s.calls != 2 || err != errBoom {
		t.Errorf("Do = %v after %d calls; want errBoom itself after 2", err, s.calls)
	}
}

func TestOnRetry(t *testing.T) {
	type call struct {
		Attempt int
		Err     string
		Delay   time.Duration
	}
	var got []call
	clk := newSleeper()
	s := &script{errs: []error{errors.New("e1"), hinted{time.Second}, errors.New("e3")}}
	p := retry.New[int](retry.WithAttempts(4), retry.WithClock(clk),
		retry.WithBackoff(backoff.Constant(50*time.Millisecond)),
		retry.WithOnRetry(func(attempt int, err error, delay time.Duration) {
			got = append(got, call{attempt, err.Error(), delay})
			if len(clk.slept) != attempt-1 {
				t.Errorf("OnRetry(%d) called after the wait", attempt)
			}
		}))
	if _, err := p.Do(context.Background(), s.op); err != nil {
		t.Fatal(err)
	}
	want := []call{
		{1, "e1", 50 * time.Millisecond},
		{2, "unavailable, retry after 1s", time.Second},
		{3, "e3", 50 * time.Millisecond},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnRetry calls mismatch (-want +got):\n%s", diff)
	}
}

func TestRetryAfterHint(t *testing.T) {
	clk := newSleeper()
	s := &script{errs: []error{hinted{2 * time.Second}, hinted{time.Millisecond}}}
	p := retry.New[int](retry.WithClock(clk), retry.WithBackoff(backoff.Constant(100*time.Millisecond)))
	if _, err := p.Do(context.Background(), s.op); err != nil {
		t.Fatal(err)
	}
	// The longer of the backoff delay and the hint.
	if diff := cmp.Diff([]time.Duration{2 * time.Second, 100 * time.Millisecond}, clk.slept); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

func TestRetryAfterHintPastMaxElapsedStopsAtOnce(t *testing.T) {
	clk := newSleeper()
	s := &script{errs: []error{errBoom, hinted{30 * time.Second}}}
	p := retry.New[int](retry.WithAttempts(5), retry.WithMaxElapsed(10*time.Second), retry.WithClock(clk),
		retry.WithBackoff(backoff.Constant(time.Second)), retry.WithMaxWait(time.Minute))
	v, err := p.Do(context.Background(), s.op)
	if s.calls != 2 || v != 2 {
		t.Errorf("Do returned %d after %d calls, want the second attempt's 2", v, s.calls)
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, clk.slept); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
	want := "retry: gave up after 2 attempts (a wait of 30s would pass MaxElapsed 10s): unavailable, retry after 30s"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if d, ok := resilience.RetryAfter(err); !ok || d != 30*time.Second {
		t.Errorf("RetryAfter(err) = %v, %v; want the hint to stay visible", d, ok)
	}
}

// refusal is an inner guard's refusal with a hint, like an open breaker.
type refusal struct{ d time.Duration }

func (r refusal) Error() string             { return "breaker: open" }
func (r refusal) Is(target error) bool      { return target == resilience.ErrRefused }
func (r refusal) RetryAfter() time.Duration { return r.d }

// An inner guard's refusal fails fast: one whose hint is longer than
// MaxRefusalWait (100 ms by default), such as an open breaker's rest of
// the cooldown, comes back at once and as it is, on any attempt; one with
// a short hint (a rate limiter's pushback) is waited for and retried, and
// so is any refusal with WithMaxRefusalWait(Off), within MaxWait.
func TestRefusalFailsFastUnlessItsHintIsShort(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []retry.Option
		errs  []error
		want  error // nil: success after the waits
		waits []time.Duration
		calls int
	}{
		{"open breaker", nil, []error{refusal{time.Second}}, refusal{time.Second}, nil, 1},
		{"opened by the second attempt", []retry.Option{retry.WithBackoff(backoff.Constant(time.Millisecond))},
			[]error{errBoom, refusal{5 * time.Second}}, refusal{5 * time.Second}, []time.Duration{time.Millisecond}, 2},
		{"hint just above the default bound", nil, []error{refusal{100*time.Millisecond + 1}}, refusal{100*time.Millisecond + 1}, nil, 1},
		{"pushback of 10ms", []retry.Option{retry.WithBackoff(backoff.Constant(time.Millisecond))},
			[]error{refusal{10 * time.Millisecond}}, nil, []time.Duration{10 * time.Millisecond}, 2},
		{"hint of the default bound", []retry.Option{retry.WithBackoff(backoff.Constant(time.Millisecond))},
			[]error{refusal{100 * time.Millisecond}}, nil, []time.Duration{100 * time.Millisecond}, 2},
		{"raised bound", []retry.Option{retry.WithMaxRefusalWait(2 * time.Second)},
			[]error{refusal{time.Second}}, nil, []time.Duration{time.Second}, 2},
		{"bound off", []retry.Option{retry.WithMaxRefusalWait(resilience.Off), retry.WithMaxElapsed(time.Minute)},
			[]error{refusal{5 * time.Second}}, nil, []time.Duration{5 * time.Second}, 2},
		// A server's hint is not a refusal: MaxRefusalWait does not bound it.
		{"server hint", nil, []error{hinted{5 * time.Second}}, nil, []time.Duration{5 * time.Second}, 2},
	} {
		clk := newSleeper()
		s := &script{errs: tc.errs}
		v, err := retry.New[int](append([]retry.Option{retry.WithClock(clk)}, tc.opts...)...).Do(context.Background(), s.op)
		if tc.want == nil && (err != nil || v != 100+tc.calls) {
			t.Errorf("%s: Do = %d, %v; want %d, nil", tc.name, v, err, 100+tc.calls)
		}
		if tc.want != nil && err != tc.want {
			t.Errorf("%s: Do = %d, %v; want the refusal itself, %v", tc.name, v, err, tc.want)
		}
		if diff := cmp.Diff(tc.waits, clk.slept); diff != "" {
			t.Errorf("%s: waits mismatch (-want +got):\n%s", tc.name, diff)
		}
		if s.calls != tc.calls {
			t.Errorf("%s: %d calls, want %d", tc.name, s.calls, tc.calls)
		}
	}
}

func TestCallerContextErrorIsNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"canceled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Second, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		}, context.DeadlineExceeded},
	} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := tc.ctx() // it ends a second into the first attempt
			defer cancel()
			clk := newSleeper()
			calls := 0
			op := func(ctx context.Context) (int, error) {
				calls++
				<-ctx.Done()
				return 7, fmt.Errorf("dial: %w", ctx.Err())
			}
			v, err := retry.New[int](retry.WithClock(clk)).Do(ctx, op)
			if calls != 1 || len(clk.slept) != 0 || v != 7 {
				t.Errorf("%s: %d calls, waits %v, v %d; want 1 call, no wait, 7", tc.name, calls, clk.slept, v)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want it to match %v", tc.name, err, tc.want)
			}
		})
	}
}

func TestOpsOwnContextErrorIsRetried(t *testing.T) {
	// The op's error says "canceled", but the caller's context is live: it
	// is the dependency's failure, not the caller's.
	s := &script{errs: []error{context.Canceled, context.DeadlineExceeded}}
	v, err := retry.New[int](retry.WithClock(newSleeper())).Do(context.Background(), s.op)
	if v != 103 || err != nil {
		t.Fatalf("Do = %d, %v; want 103, nil", v, err)
	}
}

func TestCancelDuringWaitStopsAtOnce(t *testing.T) {
	clk := clock.NewFake()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := retry.New[int](retry.WithClock(clk), retry.WithBackoff(backoff.Constant(time.Hour)))
	type result struct {
		v   int
		err error
	}
	done := make(chan result)
	go func() {
		v, err := p.Do(ctx, func(context.Context) (int, error) { return 9, errBoom })
		done <- result{v, err}
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := clk.BlockUntil(wctx, 1); err != nil {
		t.Fatalf("the policy did not start its wait within 10s: %v", err)
	}
	cancel() // the clock never moves: Do must return without it
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Do did not return within 10s of the cancellation")
	}
	if r.v != 9 || !errors.Is(r.err, context.Canceled) || !errors.Is(r.err, errBoom) {
		t.Fatalf("Do = %d, %v; want 9 and an error matching both context.Canceled and errBoom", r.v, r.err)
	}
	if want := "retry: gave up after 1 attempt (context canceled): boom"; r.err.Error() != want {
		t.Errorf("err = %q, want %q", r.err, want)
	}
	if n := clk.Waiters(); n != 0 {
		t.Errorf("%d timers left armed", n)
	}
}

func TestCancelBetweenAttemptsDoesNotSleep(t *testing.T) {
	clk := newSleeper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	op := func(context.Context) (int, error) {
		cancel() // the caller gives up while the attempt runs
		return 0, errBoom
	}
	hooks := 0
	_, err := retry.New[int](retry.WithClock(clk), retry.WithOnRetry(func(int, error, time.Duration) { hooks++ })).Do(ctx, op)
	if len(clk.slept) != 0 || clk.late != 0 || hooks != 0 {
		t.Errorf("after cancellation: slept %v, Sleep called %d times, OnRetry called %d times; want none",
			clk.slept, clk.late, hooks)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errBoom) {
		t.Errorf("err = %v, want it to match context.Canceled and errBoom", err)
	}
}

func TestExhaustionWrapsLastError(t *testing.T) {
	last := &hinted{time.Millisecond}
	s := &script{errs: []error{errBoom, errBoom, last}}
	v, err := retry.New[int](retry.WithClock(newSleeper())).Do(context.Background(), s.op)
	if v != 3 {
		t.Errorf("v = %d, want the last attempt's 3", v)
	}
	var h *hinted
	if !errors.As(err, &h) || h != last {
		t.Errorf("errors.As(%v) did not reach the last error", err)
	}
	var re *retry.Error
	if !errors.As(err, &re) || re.Attempts != 3 || re.Err != last {
		t.Fatalf("err = %#v, want a *retry.Error{Attempts: 3, Err: last}", err)
	}
}

func TestPermanentIsNotRetried(t *testing.T) {
	perm := resilience.Permanent(errBoom)
	wrapped := fmt.Errorf("get: %w", perm)
	for _, e := range []error{perm, wrapped} {
		s := &script{errs: []error{e}}
		v, err := retry.New[int](retry.WithClock(newSleeper()), retry.WithRetryIf(func(error) bool { return true })).Do(context.Background(), s.op)
		if s.calls != 1 || v != 1 || err != e {
			t.Errorf("%v: Do = %d, %v after %d calls; want 1 and the error itself after 1 call", e, v, err, s.calls)
		}
	}
}

func TestPanicIsNotRetried(t *testing.T) {
	calls := 0
	defer func() {
		if r := recover(); r != "kaboom" || calls != 1 {
			t.Errorf("recovered %v after %d calls; want kaboom after 1", r, calls)
		}
	}()
	_, _ = retry.New[int](retry.WithClock(newSleeper())).Do(context.Background(), func(context.Context) (int, error) {
		calls++
		panic("kaboom")
	})
	t.Error("Do returned")
}

func TestSuccessDoesNotAllocate(t *testing.T) {
	b := retry.NewBudget(retry.BudgetConfig{Ratio: 0.2, MinPerSecond: 10, Window: 10 * time.Second})
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	for name, p := range map[string]resilience.Policy[int]{
		"defaults":    retry.New[int](),
		"max elapsed": retry.New[int](retry.WithMaxElapsed(time.Second)),
		"budget":      retry.New[int](retry.WithBudget(b)),
	} {
		if n := testing.AllocsPerRun(1000, func() { _, _ = p.Do(ctx, op) }); n != 0 {
			t.Errorf("%s: %v allocs per successful call, want 0", name, n)
		}
	}
}

// nowCounter is a clock that counts its readings.
type nowCounter struct {
	*clock.Fake
	nows int
}

func (c *nowCounter) Now() time.Time { c.nows++; return c.Fake.Now() }

// An execution whose first attempt succeeds reads the clock once when
// MaxElapsed is set (its start), and not at all without it.
func TestSuccessReadsTheClockOnlyForMaxElapsed(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []retry.Option
		want int
	}{
		{"defaults", nil, 0},
		{"max elapsed", []retry.Option{retry.WithMaxElapsed(time.Second)}, 1},
	} {
		clk := &nowCounter{Fake: clock.NewFake()}
		p := retry.New[int](append(tc.opts, retry.WithClock(clk))...)
		if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); err != nil {
			t.Fatal(err)
		}
		if clk.nows != tc.want {
			t.Errorf("%s: %d clock readings, want %d", tc.name, clk.nows, tc.want)
		}
	}
}

// MaxElapsed counts from the execution's start, also at its least value, 1ns:
// retries whose attempts and waits take no time fit in it.
func TestLeastMaxElapsedAllowsRetriesThatTakeNoTime(t *testing.T) {
	s := &script{errs: fails(2, errBoom)}
	v, err := retry.New[int](retry.WithClock(newSleeper()), retry.WithMaxElapsed(time.Nanosecond),
		retry.WithBackoff(backoff.Constant(0))).Do(context.Background(), s.op)
	if v != 103 || err != nil || s.calls != 3 {
		t.Errorf("Do = %d, %v after %d calls; want 103, nil after 3", v, err, s.calls)
	}
	// An attempt of 1ms uses it up: no retry.
	clk := newSleeper()
	calls := 0
	_, err = retry.New[int](retry.WithClock(clk), retry.WithMaxElapsed(time.Nanosecond),
		retry.WithBackoff(backoff.Constant(0))).Do(context.Background(), func(context.Context) (int, error) {
		calls++
		clk.Advance(time.Millisecond)
		return 0, errBoom
	})
	if calls != 1 || !errors.Is(err, retry.ErrMaxElapsed) {
		t.Errorf("attempt of 1ms: %d calls, err = %v; want 1 call and ErrMaxElapsed", calls, err)
	}
}

// A wait that ends exactly at MaxElapsed after the start fits; the next one,
// with MaxElapsed used up, does not.
func TestWaitEndingAtMaxElapsedFits(t *testing.T) {
	clk := newSleeper()
	s := &script{errs: fails(2, errBoom)}
	_, err := retry.New[int](retry.WithClock(clk), retry.WithMaxElapsed(time.Second),
		retry.WithBackoff(backoff.Constant(time.Second))).Do(context.Background(), s.op)
	if s.calls != 2 || !errors.Is(err, retry.ErrMaxElapsed) {
		t.Errorf("%d calls, err = %v; want 2 calls and ErrMaxElapsed", s.calls, err)
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, clk.slept); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

func BenchmarkSuccess(b *testing.B) {
	p := retry.New[int]()
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, op)
	}
}

func BenchmarkSuccessWithBudget(b *testing.B) {
	p := retry.New[int](retry.WithBudget(retry.NewBudget(retry.BudgetConfig{Ratio: 0.2, MinPerSecond: 10, Window: 10 * time.Second})))
	op := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = p.Do(ctx, op)
		}
	})
}

func BenchmarkTwoFailuresThenSuccess(b *testing.B) {
	p := retry.New[int](retry.WithBackoff(backoff.Constant(0)))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		_, _ = p.Do(ctx, func(context.Context) (int, error) {
			if n++; n < 3 {
				return 0, errBoom
			}
			return n, nil
		})
	}
}

// deadlineCtx gives a live context a deadline on a fake clock.
type deadlineCtx struct {
	context.Context
	d time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.d, true }

// Regression: a wait that would end after the caller's deadline was slept
// into the deadline; it must stop at once, without OnRetry, as a wait past
// MaxElapsed does, with an error that matches context.DeadlineExceeded and
// the last error.
func TestWaitPastCallerDeadlineStopsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		left  time.Duration // from the end of the failed attempt to the deadline
		calls int
		want  string
	}{
		{time.Second, 1, "retry: gave up after 1 attempt (a wait of 2s would not end before the context's deadline, 1s away): boom"},
		{2 * time.Second, 1, "retry: gave up after 1 attempt (a wait of 2s would not end before the context's deadline, 2s away): boom"},
		{time.Nanosecond, 1, "retry: gave up after 1 attempt (a wait of 2s would not end before the context's deadline, 1ns away): boom"},
		{0, 1, "retry: gave up after 1 attempt (the context's deadline has passed): boom"},
		{10 * time.Second, 3, "retry: gave up after 3 attempts: boom"},
	} {
		clk := newSleeper()
		hooks := 0
		s := &script{errs: fails(10, errBoom)}
		p := retry.New[int](retry.WithClock(clk), retry.WithBackoff(backoff.Constant(2*time.Second)),
			retry.WithOnRetry(func(int, error, time.Duration) { hooks++ }))
		ctx := deadlineCtx{context.Background(), clk.Now().Add(tc.left)}
		_, err := p.Do(ctx, s.op)
		if s.calls != tc.calls || len(clk.slept) != tc.calls-1 || hooks != tc.calls-1 {
			t.Errorf("deadline %v away: %d calls, waits %v, %d hooks; want %d calls and a wait and hook between each",
				tc.left, s.calls, clk.slept, hooks, tc.calls)
		}
		if err == nil || err.Error() != tc.want {
			t.Errorf("deadline %v away: err = %v, want %q", tc.left, err, tc.want)
		}
		var re *retry.Error
		if tc.calls == 1 && (!errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errBoom) ||
			!errors.As(err, &re) || re.Reason != context.DeadlineExceeded) {
			t.Errorf("deadline %v away: err = %#v, want a *retry.Error with Reason context.DeadlineExceeded, matching it and errBoom", tc.left, err)
		}
	}
	// The same with the real clock and a standard context: at once.
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := retry.New[int](retry.WithBackoff(backoff.Constant(2*time.Second))).Do(ctx, func(context.Context) (int, error) { return 0, errBoom })
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 0 {
			t.Errorf("err = %v after %v; want context.DeadlineExceeded at once", err, time.Since(start))
		}
	})
}

// Regression: a Retry-After hint of the largest Duration, "never" (a rate
// limiter of rate 0 refuses so), was slept on until the context ended.
func TestNeverHintStopsAtOnce(t *testing.T) {
	never := hinted{resilience.Never}
	clk := newSleeper()
	s := &script{errs: []error{never}}
	v, err := retry.New[int](retry.WithClock(clk), retry.WithAttempts(5)).Do(context.Background(), s.op)
	if s.calls != 1 || len(clk.slept) != 0 || v != 1 || err != error(never) {
		t.Errorf("Do = %d, %v after %d calls and waits %v; want 1 and the error itself after 1 call, no wait", v, err, s.calls, clk.slept)
	}
	// A real one: the limiter admits one call in all.
	lim := ratelimit.New(resilience.Off, 1, ratelimit.WithClock(clk))
	calls := 0
	p := resilience.Then(retry.New[int](retry.WithClock(clk), retry.WithAttempts(5)), ratelimit.Policy[int](lim))
	op := func(context.Context) (int, error) { calls++; return 0, errBoom }
	_, _ = p.Do(context.Background(), op)
	clk.slept = nil
	_, err = p.Do(context.Background(), op)
	if calls != 1 || len(clk.slept) != 0 || !errors.Is(err, ratelimit.ErrLimited) {
		t.Errorf("rate 0: %d op calls, waits %v, err %v; want 1 call in all, no wait, ErrLimited", calls, clk.slept, err)
	}
}

// Regression: when an attempt itself ran past MaxElapsed, the message read
// "a wait of 0s would pass MaxElapsed 200ms". An attempt that ends exactly at
// MaxElapsed has used it up too (a wait of 0 would still fit: the backoff
// waits 1ns).
func TestMaxElapsedUsedUpByAttempt(t *testing.T) {
	for _, took := range []time.Duration{250 * time.Millisecond, 200 * time.Millisecond} {
		clk := newSleeper()
		op := func(context.Context) (int, error) {
			clk.Advance(took)
			return 0, errBoom
		}
		_, err := retry.New[int](retry.WithClock(clk), retry.WithMaxElapsed(200*time.Millisecond),
			retry.WithBackoff(backoff.Constant(time.Nanosecond))).Do(context.Background(), op)
		if want := fmt.Sprintf("retry: gave up after 1 attempt (MaxElapsed 200ms used up: %v elapsed): boom", took); err == nil || err.Error() != want {
			t.Errorf("attempt of %v: err = %v, want %q", took, err, want)
		}
		if !errors.Is(err, retry.ErrMaxElapsed) {
			t.Errorf("attempt of %v: err = %v, want it to match ErrMaxElapsed", took, err)
		}
	}
}

// TestReasons pins how a caller tells why the policy gave up: Reason, and
// errors.Is with it, for each way of giving up.
func TestReasons(t *testing.T) {
	bg := context.Background()
	canceled, cancel := context.WithCancel(bg)
	defer cancel()
	budget := retry.NewBudget(retry.BudgetConfig{Ratio: 0.01, MinPerSecond: resilience.Off, Window: time.Second})
	for _, tc := range []struct {
		name string
		ctx  context.Context
		opts []retry.Option
		errs []error
		want error
	}{
		{"attempts", bg, nil, fails(3, errBoom), retry.ErrAttempts},
		{"max elapsed", bg, []retry.Option{retry.WithMaxElapsed(time.Second), retry.WithBackoff(backoff.Constant(2 * time.Second))}, fails(3, errBoom), retry.ErrMaxElapsed},
		{"hint past max elapsed", bg, []retry.Option{retry.WithMaxElapsed(time.Second)}, []error{hinted{5 * time.Second}}, retry.ErrMaxElapsed},
		{"hint past max wait", bg, nil, []error{hinted{time.Minute}}, retry.ErrMaxWait},
		{"hint past max wait and max elapsed", bg, []retry.Option{retry.WithMaxElapsed(time.Second)}, []error{hinted{time.Minute}}, retry.ErrMaxWait},
		{"budget", bg, []retry.Option{retry.WithBudget(budget)}, fails(3, errBoom), retry.ErrBudgetExhausted},
		{"canceled", canceled, nil, fails(3, errBoom), context.Canceled},
		{"deadline ahead", deadlineCtx{bg, time.Unix(0, 0)}, nil, fails(3, errBoom), context.DeadlineExceeded},
		// The op's own error matching a reason does not make it the reason.
		{"op's deadline error", bg, nil, fails(3, context.DeadlineExceeded), retry.ErrAttempts},
	} {
		clk := newSleeper()
		op := (&script{errs: tc.errs}).op
		if tc.ctx == canceled {
			op = cancelling(op, cancel) // the caller cancels during the first attempt
		}
		_, err := retry.New[int](append([]retry.Option{retry.WithClock(clk)}, tc.opts...)...).Do(tc.ctx, op)
		var re *retry.Error
		if !errors.As(err, &re) || re.Reason != tc.want || !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %#v, want a *retry.Error with Reason %v", tc.name, err, tc.want)
		}
	}
}

// Regression: cancellation wrapped errors that were never to be retried
// (Permanent, or rejected by RetryIf) in an Error, though the policy
// returns them as they are otherwise.
func TestNotRetriedErrorsAreReturnedAsTheyAreAfterCancellation(t *testing.T) {
	errNo := errors.New("no")
	perm := resilience.Permanent(errBoom)
	for _, tc := range []struct {
		name string
		err  error
		opts []retry.Option
	}{
		{"permanent", perm, nil},
		{"rejected", errNo, []retry.Option{retry.WithRetryIf(func(err error) bool { return err != errNo })}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		op := func(context.Context) (int, error) { cancel(); return 0, tc.err }
		_, err := retry.New[int](append([]retry.Option{retry.WithClock(newSleeper())}, tc.opts...)...).Do(ctx, op)
		if err != tc.err {
			t.Errorf("%s: err = %v, want the error itself", tc.name, err)
		}
	}
}

// Regression: a retry without MaxElapsed slept as
// long as any hint asked (16 minutes on a Retry-After: 1000). A hint
// beyond MaxWait (by default the larger of the Backoff's Max and 10 s)
// ends the execution at once, as a hint beyond MaxElapsed does.
func TestHintPastMaxWaitStopsAtOnce(t *testing.T) {
	clk := newSleeper()
	hooks := 0
	s := &script{errs: []error{errBoom, hinted{1000 * time.Second}}}
	p := retry.New[int](retry.WithClock(clk), retry.WithOnRetry(func(int, error, time.Duration) { hooks++ }))
	v, err := p.Do(context.Background(), s.op)
	if s.calls != 2 || v != 2 || hooks != 1 {
		t.Errorf("Do returned %d after %d calls and %d hooks; want the second attempt's 2 after 2 calls, 1 hook", v, s.calls, hooks)
	}
	if len(clk.slept) != 1 || clk.slept[0] > 100*time.Millisecond {
		t.Errorf("waits %v, want only the first backoff delay (at most 100ms)", clk.slept)
	}
	var re *retry.Error
	if !errors.As(err, &re) || re.Reason != retry.ErrMaxWait || !errors.Is(err, retry.ErrMaxWait) || !errors.Is(err, error(hinted{1000 * time.Second})) {
		t.Errorf("err = %#v, want a *retry.Error with Reason ErrMaxWait, matching it and the hinted error", err)
	}
	want := "retry: gave up after 2 attempts (a Retry-After of 16m40s exceeds MaxWait 10s): unavailable, retry after 16m40s"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	if d, ok := resilience.RetryAfter(err); !ok || d != 1000*time.Second {
		t.Errorf("RetryAfter(err) = %v, %v; want the hint to stay visible", d, ok)
	}
}

// MaxWait 0 is the larger of the Backoff's Max and 10 s: a hint of exactly
// that is waited for, a nanosecond more ends the execution.
func TestMaxWaitDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backoff backoff.Schedule
		want    time.Duration
	}{
		{"default backoff", backoff.Schedule{}, 10 * time.Second},
		{"no wait", backoff.Constant(0), 10 * time.Second},
		{"short waits", backoff.Constant(50 * time.Millisecond), 10 * time.Second},
		{"long max", backoff.Exponential(time.Second, 2, time.Minute), time.Minute},
		{"long constant", backoff.Constant(30 * time.Second), 30 * time.Second},
	} {
		for _, hint := range []time.Duration{tc.want, tc.want + 1} {
			clk := newSleeper()
			s := &script{errs: []error{hinted{hint}}}
			_, err := retry.New[int](retry.WithClock(clk), retry.WithConfig(retry.Config{Backoff: tc.backoff})).Do(context.Background(), s.op)
			if hint == tc.want && (err != nil || len(clk.slept) != 1 || clk.slept[0] != hint) {
				t.Errorf("%s: hint %v: err %v, waits %v; want the hint waited for, then success", tc.name, hint, err, clk.slept)
			}
			if hint > tc.want && (!errors.Is(err, retry.ErrMaxWait) || len(clk.slept) != 0) {
				t.Errorf("%s: hint %v: err %v, waits %v; want ErrMaxWait at once (MaxWait %v)", tc.name, hint, err, clk.slept, tc.want)
			}
		}
	}
}

// WithMaxWait sets the cap: hints up to it are waited for, Backoff delays
// above it are cut to it, and Off waits for any hint.
func TestWithMaxWait(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []retry.Option
		errs  []error
		waits []time.Duration
		err   string
	}{
		{"longer cap", []retry.Option{retry.WithMaxWait(time.Minute)},
			[]error{hinted{30 * time.Second}}, []time.Duration{30 * time.Second}, ""},
		{"shorter cap", []retry.Option{retry.WithMaxWait(time.Second)},
			[]error{hinted{2 * time.Second}}, nil,
			"retry: gave up after 1 attempt (a Retry-After of 2s exceeds MaxWait 1s): unavailable, retry after 2s"},
		{"cap cuts the backoff", []retry.Option{retry.WithMaxWait(2 * time.Second), retry.WithBackoff(backoff.Constant(5 * time.Second))},
			[]error{errBoom, hinted{time.Second}}, []time.Duration{2 * time.Second, 2 * time.Second}, ""},
		{"Off", []retry.Option{retry.WithMaxWait(resilience.Off)},
			[]error{hinted{1000 * time.Second}, hinted{time.Hour}}, []time.Duration{1000 * time.Second, time.Hour}, ""},
		{"Off, and a hint of never", []retry.Option{retry.WithMaxWait(resilience.Off)},
			[]error{hinted{resilience.Never}}, nil, "unavailable, retry after 2562047h47m16.854775807s"},
	} {
		clk := newSleeper()
		s := &script{errs: tc.errs}
		_, err := retry.New[int](append([]retry.Option{retry.WithClock(clk)}, tc.opts...)...).Do(context.Background(), s.op)
		if got := errString(err); got != tc.err {
			t.Errorf("%s: err = %q, want %q", tc.name, got, tc.err)
		}
		if diff := cmp.Diff(tc.waits, clk.slept); diff != "" {
			t.Errorf("%s: waits mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
	want := "retry: MaxWait must be > 0, 0 (the default) or Off (no cap), got -2s"
	if got, want := panicString(func() { retry.WithMaxWait(-2 * time.Second) }), "retry: WithMaxWait(-2s): the wait must be > 0, or resilience.Off for no cap; leave the option out for the default"; got != want {
		t.Errorf("WithMaxWait(-2s) panicked with %q, want %q", got, want)
	}
	if got := errString(retry.Config{MaxWait: -2 * time.Second}.Validate()); got != want {
		t.Errorf("Config{MaxWait: -2s}.Validate() = %q, want %q", got, want)
	}
}

// The policy describes its layer with the settings it runs with: the
// defaults filled in, MaxWait Off as Off, and whether a Budget bounds it.
func TestLayerDescribesTheSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    resilience.Policy[int]
		want resilience.Layer
	}{
		{"defaults", retry.New[int](),
			resilience.Layer{Name: "retry", Kind: resilience.KindRetry, Attempts: 3, MaxWait: 10 * time.Second}},
		{"set", retry.New[int](retry.WithName("r"), retry.WithAttempts(5), retry.WithMaxElapsed(time.Minute),
			retry.WithMaxWait(2*time.Second), retry.WithBudget(retry.NewBudget(retry.BudgetConfig{}))),
			resilience.Layer{Name: "retry(r)", Kind: resilience.KindRetry, Attempts: 5, MaxElapsed: time.Minute, MaxWait: 2 * time.Second, Budget: true}},
		{"MaxWait Off", retry.New[int](retry.WithMaxWait(resilience.Off)),
			resilience.Layer{Name: "retry", Kind: resilience.KindRetry, Attempts: 3, MaxWait: resilience.Off}},
	} {
		if diff := cmp.Diff([]resilience.Layer{tc.want}, tc.p.Layers()); diff != "" {
			t.Errorf("%s: Layers mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}
