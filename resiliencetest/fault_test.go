package resiliencetest

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// wantPanic runs f and checks that it panics with a string that contains
// want.
func wantPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		msg, _ := r.(string)
		if !strings.Contains(msg, want) {
			t.Errorf("panic = %v, want one containing %q", r, want)
		}
	}()
	f()
}

func TestHealthy(t *testing.T) {
	for _, f := range []Fault{Healthy(), {}} {
		if err := f.Inject(context.Background()); err != nil {
			t.Errorf("%v: Inject = %v, want nil", f, err)
		}
		if got := f.String(); got != "healthy" {
			t.Errorf("String = %q, want healthy", got)
		}
	}
}

func TestFail(t *testing.T) {
	if err := Fail(nil).Inject(context.Background()); err != ErrInjected {
		t.Errorf("Fail(nil): Inject = %v, want ErrInjected", err)
	}
	mine := errors.New("db: connection refused")
	f := Fail(mine)
	for range 3 {
		if err := f.Inject(context.Background()); err != mine {
			t.Errorf("Fail(mine): Inject = %v, want %v", err, mine)
		}
	}
	if diff := cmp.Diff([]string{"fail", `fail("db: connection refused")`}, []string{Fail(nil).String(), f.String()}); diff != "" {
		t.Errorf("names mismatch (-want +got):\n%s", diff)
	}
}

// failures returns which of n calls of f failed, as a string of 'x' (fail)
// and '.' (success).
func failures(f Fault, n int) string {
	var b strings.Builder
	for range n {
		if f.Inject(context.Background()) != nil {
			b.WriteByte('x')
		} else {
			b.WriteByte('.')
		}
	}
	return b.String()
}

func TestFailRate(t *testing.T) {
	if got := failures(FailRate(0, 1), 100); strings.Contains(got, "x") {
		t.Errorf("rate 0 failed some calls: %s", got)
	}
	if got := failures(FailRate(1, 1), 100); strings.Contains(got, ".") {
		t.Errorf("rate 1 let some calls through: %s", got)
	}
	const n = 20000
	got := strings.Count(failures(FailRate(0.3, 7), n), "x")
	if got < n*0.3-300 || got > n*0.3+300 { // 4.6 standard deviations
		t.Errorf("rate 0.3 failed %d of %d calls, want about %d", got, n, n*3/10)
	}
	if err := FailRate(1, 1).Inject(context.Background()); err != ErrInjected {
		t.Errorf("Inject = %v, want ErrInjected", err)
	}
}

func TestFailRateIsSeeded(t *testing.T) {
	a, b, c := failures(FailRate(0.5, 42), 64), failures(FailRate(0.5, 42), 64), failures(FailRate(0.5, 43), 64)
	if a != b {
		t.Errorf("same seed, different failures:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 42 and 43 fail the same calls: %s", a)
	}
}

func TestFailRateInvalid(t *testing.T) {
	for _, r := range []float64{-0.1, 1.5, math.NaN()} {
		wantPanic(t, "resiliencetest: FailRate rate must be in [0, 1], got", func() { FailRate(r, 1) })
	}
}

func TestRetryAfter(t *testing.T) {
	for _, d := range []time.Duration{0, 3 * time.Second, resilience.Never} {
		err := RetryAfter(d).Inject(context.Background())
		if !errors.Is(err, ErrInjected) {
			t.Errorf("RetryAfter(%v): %v does not match ErrInjected", d, err)
		}
		if got, ok := resilience.RetryAfter(err); !ok || got != d {
			t.Errorf("RetryAfter(%v): resilience.RetryAfter = %v, %v; want %v, true", d, got, ok, d)
		}
	}
	if got, want := RetryAfter(2*time.Second).Inject(context.Background()).Error(), "resiliencetest: injected failure, retry after 2s"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	if got, want := RetryAfter(resilience.Never).Inject(context.Background()).Error(), "resiliencetest: injected failure, retry never"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	f := RetryAfter(time.Second)
	if n := testing.AllocsPerRun(100, func() { _ = f.Inject(context.Background()) }); n != 0 {
		t.Errorf("a call allocates %v times, want 0", n)
	}
	wantPanic(t, "resiliencetest: RetryAfter hint must be >= 0, got -1s", func() { RetryAfter(-time.Second) })
}

func TestHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			err = Hang().Inject(ctx)
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatalf("Hang returned %v before its context was done", err)
		default:
		}
		cancel()
		<-done
		if err != context.Canceled {
			t.Errorf("Hang = %v, want context.Canceled", err)
		}
	})
}

func TestHangDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		if err := Hang().Inject(ctx); err != context.DeadlineExceeded {
			t.Errorf("Hang = %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != time.Minute {
			t.Errorf("Hang returned after %v, want 1m (the deadline)", got)
		}
	})
}

func TestPanic(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want boom", r)
		}
	}()
	_ = Panic("boom").Inject(context.Background())
	t.Fatal("Panic did not panic")
}

func TestChain(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	var ran []string
	probe := func(name string, err error) Fault {
		return Fault{name: name, inject: func(context.Context) error { ran = append(ran, name); return err }}
	}
	err := Chain(probe("a", nil), probe("b", first), probe("c", second)).Inject(context.Background())
	if err != first {
		t.Errorf("Chain = %v, want the first error", err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ran); diff != "" {
		t.Errorf("faults run mismatch (-want +got):\n%s", diff)
	}
	if err := Chain().Inject(context.Background()); err != nil {
		t.Errorf("Chain() = %v, want nil (healthy)", err)
	}
	if got, want := Chain(Fail(nil), Hang()).String(), "chain(fail, hang)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestSequence(t *testing.T) {
	got := failures(Sequence(Fail(nil), Healthy(), Fail(nil), Healthy()), 6)
	if want := "x.x..."; got != want {
		t.Errorf("Sequence: %s, want %s", got, want)
	}
	if got := failures(Sequence(), 3); got != "..." {
		t.Errorf("Sequence(): %s, want healthy", got)
	}
}

// TestSequenceConcurrent checks that calls at once are numbered once each.
func TestSequenceConcurrent(t *testing.T) {
	const n = 200
	faults := make([]Fault, n/2)
	for i := range faults {
		faults[i] = Fail(nil)
	}
	f := Sequence(append(faults, Healthy())...)
	var mu sync.Mutex
	failed := 0
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if f.Inject(context.Background()) != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed != n/2 {
		t.Errorf("%d calls failed, want %d", failed, n/2)
	}
}

func TestFunc(t *testing.T) {
	calls := 0
	mine := errors.New("mine")
	f := Func("mine", func(context.Context) error { calls++; return mine })
	if err := f.Inject(context.Background()); err != mine || calls != 1 {
		t.Errorf("Inject = %v after %d calls, want mine after 1", err, calls)
	}
	if got := f.String(); got != "mine" {
		t.Errorf("String = %q, want mine", got)
	}
	if got := Func("", func(context.Context) error { return nil }).String(); got != "func" {
		t.Errorf("unnamed: String = %q, want func", got)
	}
	wantPanic(t, "resiliencetest: Func inject must not be nil", func() { Func("x", nil) })
}
