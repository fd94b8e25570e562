package timeout_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitDone is an op that honours its context: it returns ctx's error when
// ctx ends, after recording what it saw.
type waitDone struct {
	deadline time.Time
	hasDL    bool
	err      error
}

func (w *waitDone) op(ctx context.Context) (int, error) {
	w.deadline, w.hasDL = ctx.Deadline()
	<-ctx.Done()
	w.err = ctx.Err()
	return -1, fmt.Errorf("op: %w", ctx.Err())
}

func checkExpired(t *testing.T, err error, msg string) {
	t.Helper()
	if !errors.Is(err, timeout.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want it to match ErrTimeout and context.DeadlineExceeded", err)
	}
	if err == nil || err.Error() != msg {
		t.Errorf("err = %v, want %q", err, msg)
	}
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Errorf("err = %v, want a Timeout() true error", err)
	}
}

func TestExpiryRealClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		w := &waitDone{}
		v, err := timeout.New[int](2*time.Second).Do(context.Background(), w.op)
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("returned after %v, want 2s", got)
		}
		if v != -1 {
			t.Errorf("v = %d, want the op's -1", v)
		}
		checkExpired(t, err, "timeout: call exceeded 2s: op: context deadline exceeded")
		if !w.hasDL || !w.deadline.Equal(start.Add(2*time.Second)) {
			t.Errorf("op saw deadline %v, %v; want %v", w.deadline, w.hasDL, start.Add(2*time.Second))
		}
		if w.err != context.DeadlineExceeded {
			t.Errorf("op saw ctx.Err() = %v, want context.DeadlineExceeded", w.err)
		}
	})
}

func TestExpiryFakeClock(t *testing.T) {
	clk := clock.NewFake()
	w := &waitDone{}
	done := make(chan error)
	go func() {
		_, err := timeout.New[int](150*time.Millisecond, timeout.WithClock(clk)).Do(context.Background(), w.op)
		done <- err
	}()
	blockUntil(t, clk, 1)
	clk.Advance(149 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("returned %v before the deadline", err)
	default:
	}
	clk.Advance(time.Millisecond)
	checkExpired(t, recv(t, done, "Do after the deadline"), "timeout: call exceeded 150ms: op: context deadline exceeded")
	if want := clock.NewFake().Now().Add(150 * time.Millisecond); !w.hasDL || !w.deadline.Equal(want) {
		t.Errorf("op saw deadline %v, %v; want %v", w.deadline, w.hasDL, want)
	}
	if w.err != context.DeadlineExceeded {
		t.Errorf("op saw ctx.Err() = %v, want context.DeadlineExceeded", w.err)
	}
}

func TestInTimeResultIsReturnedAndTimerStopped(t *testing.T) {
	clk := clock.NewFake()
	errOp := errors.New("op failed")
	for _, want := range []error{nil, errOp} {
		v, err := timeout.New[int](time.Second, timeout.WithClock(clk)).Do(context.Background(),
			func(context.Context) (int, error) { return 5, want })
		if v != 5 || err != want {
			t.Errorf("Do = %d, %v; want 5, %v", v, err, want)
		}
		if n := clk.Waiters(); n != 0 {
			t.Errorf("%d timers left armed after the call", n)
		}
	}
}

func TestLateSuccessIsReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v, err := timeout.New[int](time.Second).Do(context.Background(), func(context.Context) (int, error) {
			time.Sleep(2 * time.Second) // ignores its context, but succeeds
			return 8, nil
		})
		if v != 8 || err != nil {
			t.Errorf("Do = %d, %v; want 8, nil", v, err)
		}
	})
}

func TestCallerCancellationIsNotTimeout(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Second, cancel)
			start := time.Now()
			_, err := timeout.New[int](time.Minute, timeout.WithAbandon(abandon)).Do(ctx, (&waitDone{}).op)
			if !errors.Is(err, context.Canceled) || errors.Is(err, timeout.ErrTimeout) {
				t.Errorf("abandon=%v: err = %v, want context.Canceled and not ErrTimeout", abandon, err)
			}
			if got := time.Since(start); got != time.Second {
				t.Errorf("abandon=%v: returned after %v, want 1s", abandon, got)
			}
		})
	}
}

func TestCallerEarlierDeadlineIsNotTimeout(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := timeout.New[int](time.Minute, timeout.WithAbandon(abandon)).Do(ctx, (&waitDone{}).op)
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, timeout.ErrTimeout) {
				t.Errorf("abandon=%v: err = %v, want the caller's context.DeadlineExceeded, not ErrTimeout", abandon, err)
			}
		})
	}
}

func TestCallerCancellationFakeClock(t *testing.T) {
	clk := clock.NewFake()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := timeout.New[int](time.Second, timeout.WithClock(clk)).Do(ctx, (&waitDone{}).op)
		done <- err
	}()
	blockUntil(t, clk, 1)
	cancel()
	if err := recv(t, done, "Do after the caller cancelled"); !errors.Is(err, context.Canceled) || errors.Is(err, timeout.ErrTimeout) {
		t.Errorf("err = %v, want context.Canceled and not ErrTimeout", err)
	}
	if n := clk.Waiters(); n != 0 {
		t.Errorf("%d timers left armed", n)
	}
}

// stubborn is an op that ignores its context: it returns only when
// released, with the value 1 and err.
type stubborn struct {
	release  chan struct{}
	returned chan struct{}
	err      error
	panicVal any
}

func newStubborn() *stubborn {
	return &stubborn{release: make(chan struct{}), returned: make(chan struct{})}
}

func (s *stubborn) op(context.Context) (int, error) {
	defer close(s.returned)
	<-s.release
	if s.panicVal != nil {
		panic(s.panicVal)
	}
	return 1, s.err
}

func TestAbandonReturnsAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStubborn()
		start := time.Now()
		v, err := timeout.New[int](time.Second, timeout.WithAbandon(true)).Do(context.Background(), s.op)
		if got := time.Since(start); got != time.Second {
			t.Errorf("returned after %v, want 1s", got)
		}
		if v != 0 {
			t.Errorf("v = %d, want the zero value", v)
		}
		checkExpired(t, err, "timeout: call exceeded 1s")
		close(s.release) // the op finishes later; its result is dropped
		<-s.returned
		synctest.Wait() // its goroutine has exited (synctest.Test would fail otherwise)
	})
	goleak.VerifyNone(t)
}

func TestAbandonFakeClockNothingLeaks(t *testing.T) {
	clk := clock.NewFake()
	s := newStubborn()
	done := make(chan error)
	go func() {
		_, err := timeout.New[int](time.Second, timeout.WithAbandon(true), timeout.WithClock(clk)).Do(context.Background(), s.op)
		done <- err
	}()
	blockUntil(t, clk, 1)
	clk.Advance(time.Second)
	checkExpired(t, recv(t, done, "Do after the deadline"), "timeout: call exceeded 1s")
	close(s.release)
	recv(t, s.returned, "the abandoned op's return once released")
	goleak.VerifyNone(t)
}

func TestAbandonInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errOp := errors.New("op failed")
		s := newStubborn()
		s.err = errOp
		time.AfterFunc(500*time.Millisecond, func() { close(s.release) })
		v, err := timeout.New[int](time.Second, timeout.WithAbandon(true)).Do(context.Background(), s.op)
		if v != 1 || err != errOp {
			t.Errorf("Do = %d, %v; want 1, %v", v, err, errOp)
		}
	})
}

func TestAbandonPanicReachesCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStubborn()
		s.panicVal = "kaboom"
		close(s.release)
		defer func() {
			if r := recover(); r != "kaboom" {
				t.Errorf("recovered %v, want kaboom", r)
			}
		}()
		_, _ = timeout.New[int](time.Second, timeout.WithAbandon(true)).Do(context.Background(), s.op)
		t.Error("Do returned")
	})
}

func TestAbandonGoexitReachesCaller(t *testing.T) {
	// runtime.Goexit in the op (t.FailNow, for one) ends the caller's
	// goroutine too, as it would without the policy.
	done := make(chan bool)
	go func() {
		returned := false
		defer func() { done <- returned }()
		_, _ = timeout.New[int](time.Hour, timeout.WithAbandon(true)).Do(context.Background(), func(context.Context) (int, error) {
			runtime.Goexit()
			return 0, nil
		})
		returned = true
	}()
	if recv(t, done, "the caller's goroutine to end") {
		t.Error("Do returned after the op called runtime.Goexit")
	}
}

func TestAbandonLatePanicIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStubborn()
		s.panicVal = "late"
		_, err := timeout.New[int](time.Second, timeout.WithAbandon(true)).Do(context.Background(), s.op)
		checkExpired(t, err, "timeout: call exceeded 1s")
		close(s.release) // the op panics with no caller left: the process lives on
		<-s.returned
		synctest.Wait()
	})
}

func TestNameAndErrTimeout(t *testing.T) {
	if got := timeout.New[int](2 * time.Second).String(); got != "timeout(2s)" {
		t.Errorf("String() = %q, want timeout(2s)", got)
	}
	if got := timeout.New[int](time.Second, timeout.WithConfig(timeout.Config{Duration: 250 * time.Millisecond})).String(); got != "timeout(250ms)" {
		t.Errorf("WithConfig: String() = %q, want timeout(250ms)", got)
	}
	if got, want := timeout.ErrTimeout.Error(), "timeout: call exceeded its timeout"; got != want {
		t.Errorf("ErrTimeout = %q, want %q", got, want)
	}
	if !errors.Is(timeout.ErrTimeout, context.DeadlineExceeded) {
		t.Error("ErrTimeout does not match context.DeadlineExceeded")
	}
}

// TestAllocsAtMostContextWithTimeout pins the allocation contract; the
// timings, beside context.WithTimeout and failsafe-go, are in bench/.
func TestAllocsAtMostContextWithTimeout(t *testing.T) {
	ctx := context.Background()
	std := testing.AllocsPerRun(1000, func() {
		c, cancel := context.WithTimeout(ctx, time.Second)
		_ = c.Done() // an op that honours its context asks for Done
		cancel()
	})
	p := timeout.New[int](time.Second)
	op := func(ctx context.Context) (int, error) { _ = ctx.Done(); return 1, nil }
	got := testing.AllocsPerRun(1000, func() { _, _ = p.Do(ctx, op) })
	if got > std {
		t.Errorf("timeout policy: %v allocs per call, context.WithTimeout: %v", got, std)
	}
	abandon := timeout.New[int](time.Second, timeout.WithAbandon(true))
	if got := testing.AllocsPerRun(1000, func() { _, _ = abandon.Do(ctx, op) }); got > std+3 {
		t.Errorf("WithAbandon: %v allocs per call, context.WithTimeout: %v (+3 documented)", got, std)
	}
	errOp := errors.New("op failed")
	failing := func(ctx context.Context) (int, error) { _ = ctx.Done(); return 1, errOp }
	if got := testing.AllocsPerRun(1000, func() { _, _ = p.Do(ctx, failing) }); got > std {
		t.Errorf("error in time: %v allocs per call, context.WithTimeout: %v", got, std)
	}
	synctest.Test(t, func(t *testing.T) {
		expired := timeout.New[int](time.Second)
		late := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
		if got := testing.AllocsPerRun(100, func() { _, _ = expired.Do(ctx, late) }); got > std {
			t.Errorf("expiry: %v allocs per call, context.WithTimeout: %v", got, std)
		}
		// The op's own error is kept: one allocation more, the error
		// that wraps it.
		lateErr := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, errOp }
		if got := testing.AllocsPerRun(100, func() { _, _ = expired.Do(ctx, lateErr) }); got > std+1 {
			t.Errorf("expiry with the op's error: %v allocs per call, context.WithTimeout: %v (+1 allowed)", got, std)
		}
	})
}

// An op that returns its context's cause, perhaps marked or wrapped, gets
// that error back as it is: the expiry is said once, not "c: c".
func TestOpReturningTheCauseSaysItOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := timeout.New[int](100 * time.Millisecond)
		_, err := p.Do(context.Background(), func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, resilience.Permanent(context.Cause(ctx))
		})
		if got, want := err.Error(), "timeout: call exceeded 100ms"; got != want {
			t.Errorf("error %q, want %q", got, want)
		}
		if !errors.Is(err, timeout.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v does not match ErrTimeout and DeadlineExceeded", err)
		}
	})
}
