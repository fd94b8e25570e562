package adaptive_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// A window whose latency is exactly MaxLatency is not over it: it may
// become the baseline and does not cut the limit. Any MaxLatency above
// zero counts, 1ns included.
func TestMaxLatencyIsInclusive(t *testing.T) {
	tests := []struct {
		name    string
		max     time.Duration
		latency time.Duration
		limit   int
		base    time.Duration
	}{
		{"latency = MaxLatency: grows, becomes the baseline", 50 * time.Millisecond, 50 * time.Millisecond, 110, 50 * time.Millisecond},
		{"MaxLatency 1ns, latency 10ms: cut by a tenth", time.Nanosecond, 10 * time.Millisecond, 90, 0},
	}
	for _, tt := range tests {
		fake := clock.NewFake()
		grow := &recorder{next: func(l float64, _ adaptive.Window) float64 { return l + 10 }}
		lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(grow), adaptive.WithInitial(100),
			adaptive.WithMaxLatency(tt.max), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(60))
		windowOf(t, lim, fake, 60, tt.latency, nil)
		if s := lim.Stats(); s.Limit != tt.limit || s.Baseline != tt.base {
			t.Errorf("%s: limit %d, baseline %v; want %d, %v", tt.name, s.Limit, s.Baseline, tt.limit, tt.base)
		}
	}
}

// A window of failures only says nothing about untimed successes: the
// algorithm's answer stands, growth included.
func TestFailuresOnlyWindowTakesTheAlgorithmsAnswer(t *testing.T) {
	fake := clock.NewFake()
	grow := &recorder{next: func(l float64, _ adaptive.Window) float64 { return l + 10 }}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(grow), adaptive.WithInitial(100), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(60))
	windowOf(t, lim, fake, 60, 10*time.Millisecond, errors.New("503"))
	if got := lim.Stats().Limit; got != 110 {
		t.Errorf("a window of 60 failures under a limit of 100, algorithm adding 10: limit %d, want 110", got)
	}
}

// One call in flight from the start of a window to its end, in which
// nothing ended, is enough for a stall: the limit halves.
func TestStallOfOneCallHalvesTheLimit(t *testing.T) {
	fake := clock.NewFake()
	keep := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(keep), adaptive.WithInitial(4), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
	hold(t, lim, 1) // never ends
	fake.Advance(10 * time.Second)
	if err := call(lim, fake, 0, context.Canceled); err != nil { // ends the first window
		t.Fatal(err)
	}
	if n := len(keep.windows); n != 1 {
		t.Fatalf("%d windows ended, want 1", n)
	}
	hold(t, lim, 3)                // admitted after the second window started
	fake.Advance(10 * time.Second) // the second: nothing ends in it
	if _, err := lim.Acquire(context.Background()); !errors.Is(err, adaptive.ErrFull) {
		t.Fatalf("a call over the limit: got %v, want ErrFull", err)
	}
	if n := len(keep.windows); n != 2 {
		t.Fatalf("%d windows ended, want 2", n)
	}
	if got := lim.Stats().Limit; got != 2 {
		t.Errorf("after a window stalled on one call: limit %d, want 4 halved to 2", got)
	}
}

// A window whose one success was not timed does not grow the limit.
func TestOneUntimedSuccessDoesNotGrowTheLimit(t *testing.T) {
	clk, rec, lim, timed, untimed := heldUntimedWindow(t)
	if got := lim.Stats().Limit; got != 200 || len(untimed) == 0 {
		t.Fatalf("after window B: limit %d (want 200), %d untimed calls (want some)", got, len(untimed))
	}
	// Window C: one untimed success; every other call cancelled.
	for _, p := range timed {
		p.Done(context.Canceled)
	}
	untimed[0].Done(nil)
	for _, p := range untimed[1:] {
		p.Done(context.Canceled)
	}
	clk.Advance(10 * time.Second) // too few calls: the window lasts 10 × Window
	if err := call(lim, clk.Fake, 0, context.Canceled); err != nil || len(rec.windows) != 3 {
		t.Fatalf("window C did not end: %v, %d windows", err, len(rec.windows))
	}
	if w := rec.windows[2]; w.Successes != 1 || w.MaxInFlight != 100 {
		t.Fatalf("window C: %d successes, MaxInFlight %d; want 1, 100", w.Successes, w.MaxInFlight)
	}
	if got := lim.Stats().Limit; got != 200 {
		t.Errorf("a window of one untimed success, the limit the bottleneck, algorithm doubling: limit %d, want 200", got)
	}
}

// Window.Refused counts the refusals of its own window only.
func TestRefusedIsPerWindow(t *testing.T) {
	fake := clock.NewFake()
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(rec), adaptive.WithInitial(1), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1))
	p := hold(t, lim, 1)[0]
	if _, err := lim.Acquire(context.Background()); !errors.Is(err, adaptive.ErrFull) {
		t.Fatalf("a call over the limit: got %v, want ErrFull", err)
	}
	fake.Advance(time.Second)
	p.Done(nil) // ends the first window
	fake.Advance(time.Second)
	if err := call(lim, fake, 0, nil); err != nil { // ends the second
		t.Fatal(err)
	}
	var got []int
	for _, w := range rec.windows {
		got = append(got, w.Refused)
	}
	if len(got) != 2 || got[0] != 1 || got[1] != 0 {
		t.Errorf("Refused of the windows: %v, want [1 0]", got)
	}
}

// Every one of a window's first 256 admissions is timed, the count
// starting afresh in each window.
func TestFirstAdmissionsOfEachWindowAreTimed(t *testing.T) {
	clk := &countingClock{Fake: clock.NewFake()}
	lim := adaptive.New(adaptive.WithClock(clk), adaptive.WithAlgorithm(&recorder{}), adaptive.WithInitial(300), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
	for range 1024 { // window A: the next times one call in 1025/256 = 4 after its first 256
		if err := call(lim, clk.Fake, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	if err := call(lim, clk.Fake, 0, context.Canceled); err != nil {
		t.Fatal(err)
	}
	var ps []*adaptive.Permit
	defer func() {
		for _, p := range ps {
			p.Done(context.Canceled)
		}
	}()
	for i := range 256 {
		before := clk.reads
		ps = append(ps, hold(t, lim, 1)[0])
		if clk.reads == before {
			t.Fatalf("admission %d of the window was not timed", i+1)
		}
	}
}

// A baseline from a slot BaselineMemory old is forgotten before the first
// window of the slot that replaces it is judged: with 8 minutes of memory,
// the 20ms of minute 1 no longer counts in minute 9, so 30ms there is
// read as a step down from 40ms (to 40/1.05), not as a new latency above
// a 20ms baseline.
func TestBaselineForgetsTheSlotItReplaces(t *testing.T) {
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(&recorder{}), adaptive.WithBaselineMemory(8*time.Minute),
		adaptive.WithMaxLatency(time.Second), adaptive.WithWindowDuration(time.Minute), adaptive.WithWindowCalls(1))
	ms := time.Millisecond
	for _, lat := range []time.Duration{20 * ms, 40 * ms, 40 * ms, 40 * ms, 40 * ms, 40 * ms, 40 * ms, 40 * ms, 30 * ms} {
		fake.Advance(time.Minute)
		if err := call(lim, fake, lat, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := lim.Stats().Baseline, time.Duration(float64(40*ms)/1.05); got != want {
		t.Errorf("baseline in minute 9: %v, want %v", got, want)
	}
}

// A long window whose calls in flight at its start stayed in flight, but
// in which other calls succeeded, is no stall: calls finished. The
// algorithm's answer (here: keep the limit) stands.
func TestLongWindowWithSuccessesIsNoStall(t *testing.T) {
	fake := clock.NewFake()
	keep := &recorder{}
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithAlgorithm(keep), adaptive.WithInitial(4), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
	hold(t, lim, 1) // in flight from the first window on
	fake.Advance(10 * time.Second)
	if err := call(lim, fake, 0, context.Canceled); err != nil { // ends the first window
		t.Fatal(err)
	}
	if err := call(lim, fake, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	fake.Advance(10 * time.Second) // the second window reaches its longest, with 1 success of 10 wanted
	if err := call(lim, fake, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(keep.windows); n != 2 {
		t.Fatalf("%d windows ended, want 2", n)
	}
	if w := keep.windows[1]; w.Successes != 2 || w.Drops != 0 || w.Duration < 10*time.Second {
		t.Fatalf("second window %+v, want 2 successes, no drop, 10s or more", w)
	}
	if got := lim.Stats().Limit; got != 4 {
		t.Errorf("limit %d after a long window with successes and a call in flight all along, want 4 (no stall)", got)
	}
}
