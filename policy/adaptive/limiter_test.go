package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// hold acquires n permits of lim and returns them; it fails the test if
// one is refused.
func hold(t *testing.T, lim *adaptive.Limiter, n int) []*adaptive.Permit {
	t.Helper()
	ps := make([]*adaptive.Permit, n)
	for i := range ps {
		ps[i] = new(adaptive.Permit)
		var err error
		if *ps[i], err = lim.Acquire(context.Background()); err != nil {
			t.Fatalf("permit %d of %d refused: %v", i+1, n, err)
		}
	}
	return ps
}

// call runs one call through lim on fake: admitted, it lasts latency and
// ends with err. It returns Acquire's error.
func call(lim *adaptive.Limiter, fake *clock.Fake, latency time.Duration, err error) error {
	p, aerr := lim.Acquire(context.Background())
	if aerr != nil {
		return aerr
	}
	fake.Advance(latency)
	p.Done(err)
	return nil
}

func TestAdmitsUpToTheLimitThenRefuses(t *testing.T) {
	lim := adaptive.New(adaptive.WithInitial(3), adaptive.WithName("db"))
	ps := hold(t, lim, 3)
	_, err := lim.Acquire(context.Background())
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, adaptive.ErrFull) || !errors.Is(err, resilience.ErrRefused) {
		t.Fatalf("fourth call: got %v, want a *resilience.RefusedError matching ErrFull and ErrRefused", err)
	}
	if diff := cmp.Diff("adaptive: full (db)", err.Error()); diff != "" {
		t.Errorf("refusal message mismatch (-want +got):\n%s", diff)
	}
	if _, ok := resilience.RetryAfter(err); ok {
		t.Errorf("a limiter's refusal carries no Retry-After hint, got one in %v", err)
	}
	want := adaptive.Stats{Limit: 3, InFlight: 3, Refused: 1}
	if diff := cmp.Diff(want, lim.Stats()); diff != "" {
		t.Errorf("Stats mismatch (-want +got):\n%s", diff)
	}
	ps[0].Done(nil)
	if _, err := lim.Acquire(context.Background()); err != nil {
		t.Fatalf("after one call ended, a call was refused: %v", err)
	}
}

func TestRefusalsShareOneErrorValue(t *testing.T) {
	lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1))
	hold(t, lim, 1)
	_, a := lim.Acquire(context.Background())
	_, b := lim.Acquire(context.Background())
	if a == nil || a != b {
		t.Fatalf("two refusals: %p and %p, want one shared non-nil error", a, b)
	}
}

func TestDoneContextLooksFirst(t *testing.T) {
	lim := adaptive.New(adaptive.WithInitial(1), adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lim.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a done ctx and a free slot: got %v, want context.Canceled", err)
	}
	hold(t, lim, 1)
	if _, err := lim.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a done ctx and no free slot: got %v, want context.Canceled", err)
	}
	if diff := cmp.Diff(adaptive.Stats{Limit: 1, InFlight: 1}, lim.Stats()); diff != "" {
		t.Errorf("a done ctx is neither admitted nor refused; Stats mismatch (-want +got):\n%s", diff)
	}
}

func TestDoneCountsOnce(t *testing.T) {
	lim := adaptive.New(adaptive.WithInitial(2))
	ps := hold(t, lim, 2)
	ps[0].Done(nil)
	ps[0].Done(nil) // ignored: a second Done would free the other call's slot
	if got := lim.Stats().InFlight; got != 1 {
		t.Fatalf("after Done twice on one of two permits: InFlight %d, want 1", got)
	}
	var zero adaptive.Permit
	zero.Done(errors.New("ignored")) // the zero Permit reports nothing
	if got := lim.Stats().InFlight; got != 1 {
		t.Fatalf("after Done on the zero Permit: InFlight %d, want 1", got)
	}
}

// The latency of a call runs from Acquire to Done on the limiter's clock,
// and the window's mean is what Stats reports once the window ends.
func TestStatsLatencyAndBaseline(t *testing.T) {
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(2))
	for _, d := range []time.Duration{10 * time.Millisecond, 30 * time.Millisecond} {
		if err := call(lim, fake, d, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := lim.Stats().Latency; got != 0 {
		t.Fatalf("before the first window ended: Latency %v, want 0", got)
	}
	fake.Advance(time.Second)
	if err := call(lim, fake, 0, nil); err != nil { // ends the window
		t.Fatal(err)
	}
	s := lim.Stats()
	// Three calls ended in the window: 10ms, 30ms and 0.
	if want := 40 * time.Millisecond / 3; s.Latency != want || s.Baseline != want {
		t.Fatalf("after the first window: Latency %v and Baseline %v, want both %v", s.Latency, s.Baseline, want)
	}
}

func TestDoneOutcomes(t *testing.T) {
	// One window per case: a single call ends it (MinSamples 1), and what
	// the algorithm sees is recorded.
	tests := []struct {
		err  error
		want adaptive.Window
	}{
		{nil, adaptive.Window{Latency: 5 * time.Millisecond, Successes: 1}},
		{errors.New("503"), adaptive.Window{Drops: 1}},
		{context.DeadlineExceeded, adaptive.Window{Drops: 1}},
		{fmt.Errorf("get: %w", context.Canceled), adaptive.Window{}},
		{resilience.Refuse(adaptive.ErrFull, "inner", -1), adaptive.Window{}},
	}
	for _, tt := range tests {
		fake := clock.NewFake()
		rec := &recorder{}
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
		fake.Advance(time.Second)
		if err := call(lim, fake, 5*time.Millisecond, tt.err); err != nil {
			t.Fatal(err)
		}
		if tt.want.Successes+tt.want.Drops == 0 {
			// Not counted: nothing ended the window. Make it end on time.
			fake.Advance(10 * time.Second)
			if err := call(lim, fake, 0, errors.New("x")); err != nil {
				t.Fatal(err)
			}
			tt.want.Drops = 1
		}
		if len(rec.windows) != 1 {
			t.Fatalf("Done(%v): %d windows ended, want 1", tt.err, len(rec.windows))
		}
		got := rec.windows[0]
		got.Duration, got.MaxInFlight, got.Baseline = 0, 0, 0
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Done(%v): window mismatch (-want +got):\n%s", tt.err, diff)
		}
	}
}

// recorder is an Algorithm that records the windows it sees and keeps the
// limit as it is, or returns what next says. (It records an Algorithm's
// windows, not telemetry events: internal/eventlog's Recorder is no use
// here.)
type recorder struct {
	windows []adaptive.Window
	next    func(limit float64, w adaptive.Window) float64
}

func (r *recorder) Next(limit float64, w adaptive.Window) float64 {
	r.windows = append(r.windows, w)
	if r.next != nil {
		return r.next(limit, w)
	}
	return limit
}

// countingClock counts the readings of a fake clock.
type countingClock struct {
	*clock.Fake
	reads int
}

func (c *countingClock) Now() time.Time {
	c.reads++
	return c.Fake.Now()
}

// When calls come fast, only a sample of them reads the clock: every one
// of a window's first 256, then one in k, k set from the window's traffic
// (here, all at one instant of the fake clock: from the last window's)
// so that such a window times about 512 calls. The window still counts
// every call, and its latency is the timed calls' mean.
func TestFastCallsAreSampled(t *testing.T) {
	clk := &countingClock{Fake: clock.NewFake()}
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(clk), adaptive.WithAlgorithm(rec), adaptive.WithMinLimit(1000), adaptive.WithMaxLimit(1000))
	window := func() {
		for range 10 {
			ps := hold(t, lim, 1000)
			clk.Advance(time.Millisecond)
			for _, p := range ps {
				p.Done(nil)
			}
		}
		clk.Advance(time.Second)
		// Cancelled calls, not counted, until a timed one ends the window.
		for i, n := 0, len(rec.windows); len(rec.windows) == n; i++ {
			if i == 10000 { // the sample times one call in 39 here
				t.Fatalf("no window ended after %d cancelled calls past the window's end", i)
			}
			_ = call(lim, clk.Fake, 0, context.Canceled)
		}
	}
	window() // 10000 calls: the next window times one in 39 after its first 256
	before := clk.reads
	window()
	reads := clk.reads - before
	if len(rec.windows) != 2 {
		t.Fatalf("%d windows ended, want 2", len(rec.windows))
	}
	w := rec.windows[1]
	if w.Successes != 10000 || w.Latency != time.Millisecond {
		t.Fatalf("the second window: %d successes at %v, want 10000 at 1ms", w.Successes, w.Latency)
	}
	// 256 + (10000-256)/39 timed calls, two readings each, and the
	// calls that end the window.
	if want := 2*(256+(10000-256)/39) + 4; reads > want+4 {
		t.Fatalf("10000 calls read the clock %d times, want about %d", reads, want)
	}
	t.Logf("10000 calls of the second window read the clock %d times", reads)
}
