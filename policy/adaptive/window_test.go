package adaptive_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// windowOf runs one window of lim (whose Window is 1s and MinSamples at
// most calls) on fake: it makes calls calls at once, each admitted, then
// all ended after latency (< 1s) with err; then it waits out the window
// and makes a call that it cancels, which is not counted but ends the
// window. It fails the test if a call is refused.
func windowOf(t *testing.T, lim *adaptive.Limiter, fake *clock.Fake, calls int, latency time.Duration, err error) {
	t.Helper()
	ps := hold(t, lim, calls)
	fake.Advance(latency)
	for _, p := range ps {
		p.Done(err)
	}
	fake.Advance(time.Second)
	if err := call(lim, fake, 0, context.Canceled); err != nil {
		t.Fatalf("the call that ends the window was refused: %v", err)
	}
}

// A window in which the calls used less than half of the limit never
// raises it: demand, not the dependency, set its latency.
func TestLimitDoesNotGrowWhenAppLimited(t *testing.T) {
	fake := clock.NewFake()
	grow := &recorder{next: func(l float64, _ adaptive.Window) float64 { return l * 2 }}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(grow), adaptive.WithInitial(20), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(9))
	for range 5 {
		windowOf(t, lim, fake, 9, time.Millisecond, nil) // 9 of 20: less than half
	}
	if got := lim.Stats().Limit; got != 20 {
		t.Fatalf("after 5 windows of 9 calls at once under a limit of 20, whose algorithm doubles it: limit %d, want 20", got)
	}
	windowOf(t, lim, fake, 10, time.Millisecond, nil) // half: the window may raise it
	if got := lim.Stats().Limit; got != 40 {
		t.Fatalf("after a window of 10 calls at once under a limit of 20: limit %d, want 40", got)
	}
}

// A window slower than MaxLatency lowers the limit by at least a tenth,
// whatever the algorithm says, and never becomes the baseline.
func TestMaxLatencyCutsTheLimit(t *testing.T) {
	fake := clock.NewFake()
	grow := &recorder{next: func(l float64, _ adaptive.Window) float64 { return l + 10 }}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(grow), adaptive.WithInitial(100),
		adaptive.WithMaxLatency(50*time.Millisecond), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(60))
	windowOf(t, lim, fake, 60, 10*time.Millisecond, nil)
	if s := lim.Stats(); s.Limit != 110 || s.Baseline != 10*time.Millisecond {
		t.Fatalf("after a healthy window: limit %d and baseline %v, want 110 and 10ms", s.Limit, s.Baseline)
	}
	want := 110.0
	for i := range 5 {
		windowOf(t, lim, fake, 60, 80*time.Millisecond, nil)
		want *= 0.9
		if s := lim.Stats(); s.Limit != int(want) || s.Baseline != 10*time.Millisecond {
			t.Fatalf("after %d windows at 80ms (MaxLatency 50ms), whose algorithm adds 10: limit %d and baseline %v, want %d and 10ms",
				i+1, s.Limit, s.Baseline, int(want))
		}
	}
}

// A window in which no call ended, while calls were in flight all along,
// halves the limit: refusals end windows too, so a stalled dependency
// moves the limit though nothing reports back from it.
func TestStallHalvesTheLimit(t *testing.T) {
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithInitial(40), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(20))
	windowOf(t, lim, fake, 20, 10*time.Millisecond, nil)
	start := lim.Stats().Limit
	hold(t, lim, start) // they never end
	refused := func() {
		t.Helper()
		if _, err := lim.Acquire(context.Background()); !errors.Is(err, adaptive.ErrFull) {
			t.Fatalf("a call over the limit: got %v, want ErrFull", err)
		}
	}
	// The window after them starts with all those calls in flight.
	fake.Advance(10 * time.Second)
	refused() // ends the window in which the calls were admitted
	fake.Advance(9 * time.Second)
	refused()
	if got := lim.Stats().Limit; got != start {
		t.Fatalf("9s into a stall (10 × Window is 10s): limit %d, want it unchanged at %d", got, start)
	}
	fake.Advance(time.Second)
	refused()
	if got, want := lim.Stats().Limit, start/2; got != want {
		t.Fatalf("10s into a stall: limit %d, want it halved to %d", got, want)
	}
}

// When every call fails, the limit keeps falling to Min: failures end
// windows and count as congestion, in every algorithm.
func TestAllCallsFailingLowerTheLimitToMin(t *testing.T) {
	for _, a := range algorithms {
		fake := clock.NewFake()
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(a.alg), adaptive.WithMinLimit(2), adaptive.WithMaxLimit(1000),
			adaptive.WithInitial(100), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(2))
		prev := 100
		for i := range 400 {
			windowOf(t, lim, fake, 2, time.Millisecond, errors.New("503"))
			got := lim.Stats().Limit
			if got > prev {
				t.Fatalf("%s: window %d of failures only raised the limit from %d to %d", a.name, i+1, prev, got)
			}
			prev = got
		}
		if prev != 2 {
			t.Errorf("%s: after 400 windows of failures only: limit %d, want Min 2", a.name, prev)
		}
	}
}

// Whatever an algorithm returns, the limit stays in [Min, Max], and a NaN
// keeps it as it was.
func TestLimitStaysWithinBounds(t *testing.T) {
	tests := []struct {
		next float64
		want int
	}{
		{math.Inf(1), 50}, {1e300, 50}, {math.Inf(-1), 5}, {-3, 5}, {0, 5}, {math.NaN(), 20}, {33.9, 33},
	}
	for _, tt := range tests {
		fake := clock.NewFake()
		rec := &recorder{next: func(float64, adaptive.Window) float64 { return tt.next }}
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithMinLimit(5), adaptive.WithMaxLimit(50), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
		windowOf(t, lim, fake, 10, time.Millisecond, nil)
		if got := lim.Stats().Limit; got != tt.want {
			t.Errorf("algorithm returns %v: limit %d, want %d", tt.next, got, tt.want)
		}
	}
}

// A window ends no earlier than Window after it began, and only once
// MinSamples calls ended in it, unless it has lasted 10 × Window.
func TestWhenAWindowEnds(t *testing.T) {
	fake := clock.NewFake()
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(3))
	for range 5 {
		if err := call(lim, fake, 100*time.Millisecond, nil); err != nil { // 5 calls by 500ms
			t.Fatal(err)
		}
	}
	if len(rec.windows) != 0 {
		t.Fatalf("0.5s into a 1s window: %d windows ended, want 0", len(rec.windows))
	}
	fake.Advance(500 * time.Millisecond)
	if err := call(lim, fake, 0, nil); err != nil {
		t.Fatal(err)
	}
	if len(rec.windows) != 1 || rec.windows[0].Successes != 6 || rec.windows[0].Duration != time.Second {
		t.Fatalf("after 1s and 6 calls: windows %+v, want one of 6 successes lasting 1s", rec.windows)
	}
	// Two calls in the next 10s: fewer than MinSamples. A cancelled
	// call, not counted, gives the window a chance to end.
	fake.Advance(4 * time.Second)
	_ = call(lim, fake, 0, nil)
	fake.Advance(6*time.Second - time.Millisecond)
	_ = call(lim, fake, 0, nil)
	_ = call(lim, fake, 0, context.Canceled)
	if len(rec.windows) != 1 {
		t.Fatalf("a window of 2 calls (MinSamples 3) ended before 10 × Window: %+v", rec.windows[1:])
	}
	fake.Advance(time.Millisecond)
	_ = call(lim, fake, 0, context.Canceled)
	if len(rec.windows) != 2 || rec.windows[1].Successes != 2 || rec.windows[1].Duration != 10*time.Second {
		t.Fatalf("at 10 × Window: windows %+v, want a second one of 2 calls lasting 10s", rec.windows)
	}
}

// The baseline is the lowest window latency of the last BaselineMemory
// (to within an eighth of it), never one above MaxLatency; with
// BaselineMemory Off it is the lowest ever.
func TestBaselineMemory(t *testing.T) {
	run := func(memory time.Duration, lats []time.Duration) []time.Duration {
		fake := clock.NewFake()
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(&recorder{}), adaptive.WithBaselineMemory(memory),
			adaptive.WithMaxLatency(time.Second), adaptive.WithWindowDuration(time.Minute), adaptive.WithWindowCalls(1))
		var got []time.Duration
		for _, lat := range lats {
			fake.Advance(time.Minute)
			if err := call(lim, fake, lat, nil); err != nil {
				t.Fatal(err)
			}
			got = append(got, lim.Stats().Baseline)
		}
		return got
	}
	ms := func(ns ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range ns {
			ds = append(ds, time.Duration(n)*time.Millisecond)
		}
		return ds
	}
	// One window a minute, just after each minute. The drop from 50ms
	// to 20ms is taken to 50/1.05 only, for the whole run of windows at
	// 20ms, until its third window (2 minutes after its first) confirms it (see
	// TestBaselineStepsDownUnlessConfirmed). With 8 minutes of memory in
	// slots of a minute, the 20ms of the window in minute 4 is remembered
	// by the windows in minutes 4 to 11; the 2000ms of minute 13, above
	// MaxLatency, never.
	lats := ms(50, 20, 20, 20, 40, 40, 40, 40, 40, 40, 40, 40, 2000, 39)
	step := 47619047 * time.Nanosecond
	want := append([]time.Duration{50 * time.Millisecond, step, step}, ms(20, 20, 20, 20, 20, 20, 20, 20, 40, 40, 39)...)
	if diff := cmp.Diff(want, run(8*time.Minute, lats)); diff != "" {
		t.Errorf("BaselineMemory 8m: baselines mismatch (-want +got):\n%s", diff)
	}
	want = append([]time.Duration{50 * time.Millisecond, step, step}, ms(20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20)...)
	if diff := cmp.Diff(want, run(resilience.Off, lats)); diff != "" {
		t.Errorf("BaselineMemory Off: baselines mismatch (-want +got):\n%s", diff)
	}
}

// One window far faster than the baseline lowers it to b/1.05 only, and
// a second in a row leaves it there (the run of fast windows lowers it
// once, by about 5%): normal windows after them are not read as
// queueing, and the limit grows on. A third window in a row, 2s after
// the first (2 × max(Window, 1s)), confirms the new latency: a dependency that is faster
// for good becomes the baseline. A window of zero latencies (calls
// answered within the clock's resolution) steps it down the same way
// and is never itself a baseline. Ordinary windows a little below the
// baseline lower it at once.
func TestBaselineStepsDownUnlessConfirmed(t *testing.T) {
	setup := func() (*adaptive.Limiter, *clock.Fake) {
		fake := clock.NewFake()
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithInitial(20), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
		for range 3 {
			windowOf(t, lim, fake, 10, 20*time.Millisecond, nil)
		}
		if got := lim.Stats().Baseline; got != 20*time.Millisecond {
			t.Fatalf("after 3 windows at 20ms: baseline %v, want 20ms", got)
		}
		return lim, fake
	}
	base := 20 * time.Millisecond
	b1 := time.Duration(float64(base) / 1.05)
	for _, fast := range []time.Duration{50 * time.Microsecond, time.Nanosecond, 0} {
		lim, fake := setup()
		var got []time.Duration
		for range 3 {
			windowOf(t, lim, fake, lim.Stats().Limit, fast, nil)
			got = append(got, lim.Stats().Baseline)
		}
		want := []time.Duration{b1, b1, fast}
		if fast == 0 {
			want[2] = b1 // a latency of 0 is no baseline
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("3 windows in a row at %v after a baseline of 20ms: baselines mismatch (-want +got):\n%s", fast, diff)
		}

		// One fast window, then normal ones: the limit grows on.
		lim, fake = setup()
		windowOf(t, lim, fake, lim.Stats().Limit, fast, nil)
		before := lim.Stats().Limit
		for range 5 {
			windowOf(t, lim, fake, lim.Stats().Limit, 20*time.Millisecond, nil)
		}
		if s := lim.Stats(); s.Baseline != b1 || s.Limit <= before {
			t.Errorf("one window at %v, then 5 at 20ms: baseline %v and limit %d (from %d), want %v and a limit grown", fast, s.Baseline, s.Limit, before, b1)
		}
	}
	// A window 4% below the baseline lowers it at once.
	lim, fake := setup()
	windowOf(t, lim, fake, 10, 19200*time.Microsecond, nil)
	if got := lim.Stats().Baseline; got != 19200*time.Microsecond {
		t.Errorf("a window at 19.2ms after a baseline of 20ms: baseline %v, want 19.2ms", got)
	}
}

// headroomGradient is Gradient2Limit's update as Netflix
// concurrency-limits has it, limit × (1 − s) + s × (limit × gradient +
// √limit), the queue headroom added on every window: the control for
// TestGradientNearPoint8DoesNotClimb.
type headroomGradient struct{}

func (headroomGradient) Next(limit float64, w adaptive.Window) float64 {
	grad := min(max(1.5*float64(w.Baseline)/float64(w.Latency), 0.5), 1)
	return limit*0.8 + 0.2*(limit*grad+math.Sqrt(limit))
}

// With the dependency's latency pinned at 1.875 times the baseline, the
// gradient sits at 0.8 for 1000 windows: the limit must never rise
// (Netflix/concurrency-limits PR 134). The headroom formula, run the same
// way, rises, so the run would catch it.
func TestGradientNearPoint8DoesNotClimb(t *testing.T) {
	run := func(alg adaptive.Algorithm) (rises int, last int) {
		fake := clock.NewFake()
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(alg), adaptive.WithInitial(10),
			adaptive.WithBaselineMemory(resilience.Off), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
		windowOf(t, lim, fake, 10, 10*time.Millisecond, nil) // the baseline: 10ms
		prev := lim.Stats().Limit
		for range 1000 {
			windowOf(t, lim, fake, lim.Stats().Limit, 18750*time.Microsecond, nil)
			if l := lim.Stats().Limit; l > prev {
				rises++
			}
			prev = lim.Stats().Limit
		}
		return rises, prev
	}
	if rises, last := run(adaptive.Gradient2{}); rises > 0 || last != 1 {
		t.Errorf("Gradient2 at gradient 0.8 for 1000 windows: the limit rose %d times and ended at %d, want no rise and Min (1)", rises, last)
	}
	if rises, last := run(headroomGradient{}); rises == 0 {
		t.Errorf("control: the headroom formula never rose (ended at %d); the test would not catch a climb", last)
	}
}

// A clock stepped back does not freeze the windows: the limiter's time
// stands still at the step and then goes on as the clock does, so windows
// keep ending every Window and the limit keeps following the calls. Here
// every call fails after the clock is set back an hour (and, second case,
// to before New): the limit falls window after window, as it would have
// without the step.
func TestClockSteppedBackKeepsWindowing(t *testing.T) {
	for _, back := range []time.Duration{time.Hour, 10 * time.Second} {
		fake := clock.NewFake()
		rec := &recorder{next: adaptive.AIMD{}.Next}
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithInitial(200), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(2))
		fake.Advance(5 * time.Second)
		windowOf(t, lim, fake, 100, 10*time.Millisecond, nil)
		before, ended := lim.Stats().Limit, len(rec.windows)
		fake.Set(fake.Now().Add(-back))
		for range 10 {
			windowOf(t, lim, fake, 2, 10*time.Millisecond, errors.New("503"))
		}
		if got, n := lim.Stats().Limit, len(rec.windows)-ended; n != 10 || got >= before/2 {
			t.Errorf("clock set back %v, then 10 windows of failures only: %d windows ended and the limit went from %d to %d; want 10 windows and the limit below %d",
				back, n, before, got, before/2)
		}
	}
}

// A window whose successful calls were none of them timed (when calls
// come fast only a sample is: see Limiter) never raises the limit, even
// with the limit the bottleneck (MaxInFlight at the limit) and an
// algorithm that would double it: nothing says the dependency has room.
// With one timed success among them the same window doubles it.
func TestUntimedSuccessesDoNotGrowTheLimit(t *testing.T) {
	for _, oneTimed := range []bool{false, true} {
		clk, rec, lim, timed, untimed := heldUntimedWindow(t)
		if got := lim.Stats().Limit; got != 200 || len(untimed) < 50 {
			t.Fatalf("after window B: limit %d (want 200), %d of 100 calls untimed (want most)", got, len(untimed))
		}
		// Window C: the held calls end; the timed ones cancelled (not
		// counted) but maybe one, the untimed ones successful.
		for i, p := range timed {
			if oneTimed && i == 0 {
				p.Done(nil)
				continue
			}
			p.Done(context.Canceled)
		}
		for _, p := range untimed {
			p.Done(nil)
		}
		clk.Advance(time.Second)
		if err := call(lim, clk.Fake, 0, context.Canceled); err != nil || len(rec.windows) != 3 {
			t.Fatalf("window C did not end: %v, %d windows", err, len(rec.windows))
		}
		w := rec.windows[2]
		want := 200
		if oneTimed {
			want = 400
		}
		if got := lim.Stats().Limit; got != want || w.MaxInFlight != 100 {
			t.Errorf("a window of %d successes (one timed: %v), MaxInFlight %d of a limit of 200, algorithm doubling: limit %d, want %d",
				w.Successes, oneTimed, w.MaxInFlight, got, want)
		}
	}
}

// heldUntimedWindow makes a limiter (limit 100, an algorithm that doubles
// it) whose window A of 1024 calls one after the other makes window B time
// one call in 4 after its first 256; window B then holds 100 calls (the
// limit), timed or untimed as returned, and ends with a refusal, doubling
// the limit to 200. The held permits are the callers' to end.
func heldUntimedWindow(t *testing.T) (clk *countingClock, rec *recorder, lim *adaptive.Limiter, timed, untimed []*adaptive.Permit) {
	t.Helper()
	clk = &countingClock{Fake: clock.NewFake()}
	rec = &recorder{next: func(l float64, _ adaptive.Window) float64 { return l * 2 }}
	lim = adaptive.New(adaptive.WithClock(clk), adaptive.WithAlgorithm(rec), adaptive.WithInitial(100), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
	// Window A: 1024 calls one after the other (using 1 of 100: the limit
	// stays); then the next window times one call in 1025/256 = 4 after
	// its first 256.
	for range 1024 {
		if err := call(lim, clk.Fake, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	if err := call(lim, clk.Fake, 0, context.Canceled); err != nil || len(rec.windows) != 1 {
		t.Fatalf("window A did not end: %v, %d windows", err, len(rec.windows))
	}
	// Window B: 256 timed successes, then 100 calls held, the limit.
	for range 256 {
		if err := call(lim, clk.Fake, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		before := clk.reads
		p := hold(t, lim, 1)[0]
		if clk.reads > before {
			timed = append(timed, p)
		} else {
			untimed = append(untimed, p)
		}
	}
	clk.Advance(time.Second)
	if _, err := lim.Acquire(context.Background()); !errors.Is(err, adaptive.ErrFull) || len(rec.windows) != 2 {
		t.Fatalf("window B did not end with a refusal: %v, %d windows", err, len(rec.windows))
	}
	return clk, rec, lim, timed, untimed
}

// With windows of 100ms, a second of calls answered at once is ten
// windows in a row: they lower the baseline to b/1.05 once, not
// 1.05 ten times over, and do not confirm it (a run confirms after 2 ×
// max(Window, 1s)); a run of fast windows lasting 2s does.
func TestBaselineRunConfirmsByTime(t *testing.T) {
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(&recorder{}), adaptive.WithInitial(20), adaptive.WithWindowDuration(100*time.Millisecond), adaptive.WithWindowCalls(10))
	win := func(lat time.Duration) {
		t.Helper()
		ps := hold(t, lim, 10)
		fake.Advance(lat)
		for _, p := range ps {
			p.Done(nil)
		}
		fake.Advance(100*time.Millisecond - lat)
		if err := call(lim, fake, 0, context.Canceled); err != nil {
			t.Fatalf("the call that ends the window was refused: %v", err)
		}
	}
	for range 5 {
		win(20 * time.Millisecond)
	}
	base := 20 * time.Millisecond
	b1 := time.Duration(float64(base) / 1.05)
	for i := range 10 {
		win(50 * time.Microsecond)
		if got := lim.Stats().Baseline; got != b1 {
			t.Fatalf("fast window %d of a second of them: baseline %v, want %v (20ms/1.05, once)", i+1, got, b1)
		}
	}
	for range 10 {
		win(50 * time.Microsecond)
	}
	if got := lim.Stats().Baseline; got != b1 {
		t.Fatalf("20 fast windows, the last 1.9s after the first: baseline %v, want %v", got, b1)
	}
	win(50 * time.Microsecond)
	// Confirmed: the baseline is the windows' latency averaged over about
	// a second, 50µs + 19.95ms × 0.9²¹, for the windows of 100ms.
	want := 50*time.Microsecond + time.Duration(float64(20*time.Millisecond-50*time.Microsecond)*math.Pow(0.9, 21))
	if got := lim.Stats().Baseline; got < want-time.Microsecond || got > want+time.Microsecond {
		t.Errorf("21 fast windows, the last 2s after the first: baseline %v, want %v (confirmed, averaged over about 1s)", got, want)
	}
}

// Short windows are noisy: with windows of 100ms alternating between
// 14ms and 10ms, the lowest window is 10ms, but the baseline is the
// lowest of their latency averaged over about a second, about 12ms, so
// that an ordinary window is not read as queueing.
func TestBaselineAveragesShortWindows(t *testing.T) {
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(&recorder{}), adaptive.WithInitial(20), adaptive.WithWindowDuration(100*time.Millisecond), adaptive.WithWindowCalls(10))
	for i := range 40 {
		lat := 14 * time.Millisecond // first: the first window is its own average
		if i%2 == 1 {
			lat = 10 * time.Millisecond
		}
		ps := hold(t, lim, 10)
		fake.Advance(lat)
		for _, p := range ps {
			p.Done(nil)
		}
		fake.Advance(100*time.Millisecond - lat)
		if err := call(lim, fake, 0, context.Canceled); err != nil {
			t.Fatalf("the call that ends the window was refused: %v", err)
		}
	}
	if got := lim.Stats().Baseline; got < 11500*time.Microsecond || got > 12*time.Millisecond {
		t.Errorf("after 40 windows alternating 14ms and 10ms: baseline %v, want between 11.5ms and 12ms", got)
	}
}
