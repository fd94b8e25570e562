package hedge_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// step is what attempt i does: it takes d (or until its context ends, if
// it honours it) and then returns (v, err), or panics with panicVal.
type step struct {
	d        time.Duration
	v        int
	err      error
	panicVal any
	stubborn bool // ignores its context
}

// log records the attempts of one call, in start order.
type log struct {
	mu      sync.Mutex
	steps   []step
	started []time.Duration // start times, from the call's start
	ended   []string        // "i:ok", "i:canceled at <t>"
	running int
	start   time.Time
}

func newLog(steps ...step) *log { return &log{steps: steps, start: time.Now()} }

func (l *log) op(ctx context.Context) (int, error) {
	l.mu.Lock()
	i := len(l.started)
	l.started = append(l.started, time.Since(l.start))
	l.running++
	s := l.steps[i]
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.running--
		l.mu.Unlock()
	}()
	t := time.NewTimer(s.d)
	defer t.Stop()
	done := ctx.Done()
	if s.stubborn {
		done = nil
	}
	select {
	case <-t.C:
	case <-done:
		l.end(fmt.Sprintf("%d:canceled at %v", i, time.Since(l.start)))
		return -1, ctx.Err()
	}
	if s.panicVal != nil {
		panic(s.panicVal)
	}
	l.end(fmt.Sprintf("%d:done at %v", i, time.Since(l.start)))
	return s.v, s.err
}

func (l *log) end(s string) {
	l.mu.Lock()
	l.ended = append(l.ended, s)
	l.mu.Unlock()
}

const ms = time.Millisecond

var errA, errB = errors.New("a failed"), errors.New("b failed")

func TestFastFirstAttemptStartsNoHedge(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		clk := clock.NewFake()
		calls := 0
		v, err := hedge.New[int](50*ms, hedge.WithClock(clk)).Do(context.Background(), func(context.Context) (int, error) {
			calls++
			return 7, nil
		})
		if v != 7 || err != nil || calls != 1 {
			t.Errorf("Do = %d, %v after %d calls; want 7, nil after 1", v, err, calls)
		}
		if n := clk.Waiters(); n != 0 {
			t.Errorf("%d timers left armed", n)
		}
	})
}

func TestHedgeWinsAndFirstIsCancelled(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		l := newLog(step{d: time.Second, v: 1}, step{d: 20 * ms, v: 2})
		start := time.Now()
		v, err := hedge.New[int](50*ms).Do(context.Background(), l.op)
		if v != 2 || err != nil {
			t.Errorf("Do = %d, %v; want the hedge's 2, nil", v, err)
		}
		if got := time.Since(start); got != 70*ms {
			t.Errorf("returned after %v, want 70ms", got)
		}
		if diff := cmp.Diff([]time.Duration{0, 50 * ms}, l.started); diff != "" {
			t.Errorf("start times mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"1:done at 70ms", "0:canceled at 70ms"}, l.ended); diff != "" {
			t.Errorf("ends mismatch (-want +got):\n%s", diff)
		}
		if l.running != 0 {
			t.Errorf("%d attempts still running after Do returned", l.running)
		}
	})
}

func TestFirstWinsAfterHedgeStarted(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		l := newLog(step{d: 60 * ms, v: 1}, step{d: time.Second, v: 2})
		v, err := hedge.New[int](50*ms).Do(context.Background(), l.op)
		if v != 1 || err != nil {
			t.Errorf("Do = %d, %v; want 1, nil", v, err)
		}
		if diff := cmp.Diff([]string{"0:done at 60ms", "1:canceled at 60ms"}, l.ended); diff != "" {
			t.Errorf("ends mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestMaxHedges(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		bubbleWithin(t, func(t *testing.T) {
			steps := make([]step, 10)
			for i := range steps {
				steps[i] = step{d: time.Second, v: i}
			}
			l := newLog(steps...)
			v, err := hedge.New[int](100*ms, hedge.WithMaxHedges(n)).Do(context.Background(), l.op)
			if v != 0 || err != nil {
				t.Errorf("MaxHedges %d: Do = %d, %v; want the first attempt's 0, nil", n, v, err)
			}
			want := make([]time.Duration, n+1)
			for i := range want {
				want[i] = time.Duration(i) * 100 * ms
			}
			if diff := cmp.Diff(want, l.started); diff != "" {
				t.Errorf("MaxHedges %d: start times mismatch (-want +got):\n%s", n, diff)
			}
		})
	}
}

func TestAllFail(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		l := newLog(step{d: 80 * ms, v: 1, err: errA}, step{d: 10 * ms, v: 2, err: errB})
		v, err := hedge.New[int](50*ms).Do(context.Background(), l.op)
		if want := "hedge: all 2 attempts failed: a failed; b failed"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
		if !errors.Is(err, errA) || !errors.Is(err, errB) {
			t.Errorf("err = %v, want it to match both attempts' errors", err)
		}
		if v != 1 {
			t.Errorf("v = %d, want the value of the attempt that failed last, 1", v)
		}
	})
}

func TestFailureStartsNextHedgeAtOnce(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		l := newLog(step{d: 10 * ms, err: errA}, step{d: 5 * ms, err: errB}, step{d: 30 * ms, v: 3})
		v, err := hedge.New[int](50*ms, hedge.WithMaxHedges(2)).Do(context.Background(), l.op)
		if v != 3 || err != nil {
			t.Errorf("Do = %d, %v; want 3, nil", v, err)
		}
		if diff := cmp.Diff([]time.Duration{0, 10 * ms, 15 * ms}, l.started); diff != "" {
			t.Errorf("start times mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestAcceptEndsRaceEarly(t *testing.T) {
	errNotFound := errors.New("404 not found")
	bubbleWithin(t, func(t *testing.T) {
		// A 404 will not change: accept it rather than hedge.
		l := newLog(step{d: 10 * ms, err: errNotFound}, step{d: time.Second, v: 2})
		p := hedge.New[int](50*ms, hedge.WithAccept(func(v int, err error) bool {
			return err == nil || errors.Is(err, errNotFound)
		}))
		v, err := p.Do(context.Background(), l.op)
		if v != 0 || err != errNotFound || len(l.started) != 1 {
			t.Errorf("Do = %d, %v after %d attempts; want 0, the 404, after 1", v, err, len(l.started))
		}
	})
	bubbleWithin(t, func(t *testing.T) {
		// An empty result is no answer: reject it and hedge.
		l := newLog(step{d: 10 * ms, v: 0}, step{d: 10 * ms, v: 0})
		p := hedge.New[int](50*ms, hedge.WithAccept(func(v int, err error) bool { return err == nil && v != 0 }))
		_, err := p.Do(context.Background(), l.op)
		if want := "hedge: all 2 attempts failed: hedge: result not accepted; hedge: result not accepted"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
	})
}

func TestCallerCancellation(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(70*ms, cancel)
		l := newLog(step{d: time.Second}, step{d: time.Second}, step{d: time.Second})
		v, err := hedge.New[int](50*ms, hedge.WithMaxHedges(2)).Do(ctx, l.op)
		if want := "hedge: context canceled after 2 attempts: context canceled; context canceled"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
		if !errors.Is(err, context.Canceled) || v != -1 {
			t.Errorf("Do = %d, %v; want -1 and an error matching context.Canceled", v, err)
		}
		time.Sleep(time.Second) // no hedge starts after the call
		if len(l.started) != 2 {
			t.Errorf("%d attempts started, want 2", len(l.started))
		}
	})
}

func TestAttemptsNeverOutliveTheCall(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		// The first attempt ignores its context: the call waits for it.
		l := newLog(step{d: 300 * ms, v: 1, stubborn: true}, step{d: 10 * ms, v: 2})
		start := time.Now()
		v, _ := hedge.New[int](50*ms).Do(context.Background(), l.op)
		if v != 2 || time.Since(start) != 300*ms || l.running != 0 {
			t.Errorf("Do = %d after %v with %d attempts running; want 2 after 300ms with none",
				v, time.Since(start), l.running)
		}
	})
}

func TestPanicInHedgeReachesCaller(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		l := newLog(step{d: time.Second, v: 1}, step{d: 10 * ms, panicVal: "kaboom"})
		defer func() {
			if r := recover(); r != "kaboom" {
				t.Errorf("recovered %v, want kaboom", r)
			}
			if l.running != 0 {
				t.Errorf("%d attempts still running after the panic reached the caller", l.running)
			}
			if diff := cmp.Diff([]string{"0:canceled at 60ms"}, l.ended); diff != "" {
				t.Errorf("ends mismatch (-want +got):\n%s", diff)
			}
		}()
		_, _ = hedge.New[int](50*ms).Do(context.Background(), l.op)
		t.Error("Do returned")
	})
}

func TestPanicInFirstAttemptWaitsForHedges(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		l := newLog(step{d: 60 * ms, panicVal: "first"}, step{d: time.Second, v: 2})
		defer func() {
			if r := recover(); r != "first" {
				t.Errorf("recovered %v, want first", r)
			}
			if l.running != 0 {
				t.Errorf("%d attempts still running after the panic reached the caller", l.running)
			}
			// The hedge is cancelled at the panic, not waited for to the end.
			if diff := cmp.Diff([]string{"1:canceled at 60ms"}, l.ended); diff != "" {
				t.Errorf("ends mismatch (-want +got):\n%s", diff)
			}
		}()
		_, _ = hedge.New[int](50*ms).Do(context.Background(), l.op)
		t.Error("Do returned")
	})
}

func TestGoexitInHedgeReachesCaller(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		done := make(chan bool)
		go func() {
			returned := false
			defer func() { done <- returned }()
			n := 0
			var mu sync.Mutex
			_, _ = hedge.New[int](50*ms).Do(context.Background(), func(ctx context.Context) (int, error) {
				mu.Lock()
				n++
				first := n == 1
				mu.Unlock()
				if first {
					<-ctx.Done()
					return 0, ctx.Err()
				}
				runtime.Goexit()
				return 0, nil
			})
			returned = true
		}()
		if <-done {
			t.Error("Do returned after a hedge called runtime.Goexit")
		}
	})
}

func TestOptions(t *testing.T) {
	if got := hedge.New[int](50 * ms).String(); got != "hedge(50ms)" {
		t.Errorf("String() = %q, want hedge(50ms)", got)
	}
	c := hedge.Config[string]{Delay: 20 * ms, MaxHedges: 3}
	if got := hedge.New[string](time.Second, hedge.WithConfig(c)).String(); got != "hedge(20ms)" {
		t.Errorf("WithConfig: String() = %q, want hedge(20ms)", got)
	}
	for _, tc := range []struct {
		name string
		new  func()
		want string
	}{
		{"WithMaxHedges(-1)", func() { hedge.WithMaxHedges(-1) }, "hedge: WithMaxHedges(-1): the hedges must be in [1, 10]; leave the option out for the default, 1"},
		{"WithMaxHedges(0)", func() { hedge.WithMaxHedges(0) }, "hedge: WithMaxHedges(0): the hedges must be in [1, 10]; leave the option out for the default, 1"},
		{"WithMaxHedges(1000)", func() { hedge.WithMaxHedges(1000) }, "hedge: WithMaxHedges(1000): the hedges must be in [1, 10]; leave the option out for the default, 1"},
		{"WithMaxWait(0)", func() { hedge.WithMaxWait(0) }, "hedge: WithMaxWait(0s): the wait must be > 0, or resilience.Off for no cap; leave the option out for the default, the Delay"},
		{"WithQuantile(0)", func() { hedge.WithQuantile(0) }, "hedge: WithQuantile(0): the quantile must be in (0, 1); leave the option out for a fixed delay"},
		{"WithMinDelay(0)", func() { hedge.WithMinDelay(0) }, "hedge: WithMinDelay(0s): the bound must be > 0; leave the option out for no lower bound"},
		{"WithMaxDelay(0)", func() { hedge.WithMaxDelay(0) }, "hedge: WithMaxDelay(0s): the bound must be > 0, or resilience.Off for none; leave the option out for no upper bound"},
		{"WithMaxDelay without WithQuantile", func() { hedge.New[int](ms, hedge.WithMaxDelay(ms)) }, "hedge: MinDelay and MaxDelay need a Quantile, got Quantile 0"},
		{"WithBudget(0)", func() { hedge.WithBudget(0) }, "hedge: WithBudget(0): the fraction must be finite and > 0; leave the option out for no budget"},
		{"WithClock(nil)", func() { hedge.WithClock(nil) }, "hedge: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
		{"WithName of invalid UTF-8", func() { hedge.WithName("db\xff") }, `hedge: WithName("db\xff"): name must be valid UTF-8`},
		{"WithMinDelay(1ns)", func() { hedge.New[int](ms, hedge.WithQuantile(0.5), hedge.WithMinDelay(1)) }, ""},
		{"a nil option", func() { hedge.New[int](ms, nil) }, "hedge: New option must not be nil"},
		{"New(1ns)", func() { hedge.New[int](1) }, ""},
		{"WithAccept of another result type", func() {
			hedge.New[int](ms, hedge.WithAccept(func(string, error) bool { return true }))
		}, "hedge: WithAccept for results of type string given to New[int]"},
		{"WithConfig of another result type", func() {
			hedge.New[int](ms, hedge.WithMaxHedges(2), hedge.WithConfig(hedge.Config[[]byte]{MaxHedges: 2}))
		}, "hedge: WithConfig for results of type []uint8 given to New[int]"},
	} {
		got := func() (s string) {
			defer func() {
				if r := recover(); r != nil {
					s = fmt.Sprint(r)
				}
			}()
			tc.new()
			return ""
		}()
		if got != tc.want {
			t.Errorf("%s: panicked with %q, want %q", tc.name, got, tc.want)
		}
	}
}

func BenchmarkHedge(b *testing.B) {
	ctx := context.Background()
	op := func(context.Context) (int, error) { return 1, nil }
	p := hedge.New[int](time.Second)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, op)
	}
}
