package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// Every one of a window's first 256 admissions is timed, the 256th too,
// whatever the stride of the sample after them: here the previous window's
// 900 calls make it one in 3, and 256 is no multiple of 3.
func TestThe256thAdmissionIsTimed(t *testing.T) {
	clk := &countingClock{Fake: clock.NewFake()}
	lim := adaptive.New(adaptive.WithClock(clk), adaptive.WithAlgorithm(&recorder{}), adaptive.WithInitial(300), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
	for range 900 {
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
	untimed := 0
	for i := range 260 {
		before := clk.reads
		ps = append(ps, hold(t, lim, 1)[0])
		switch {
		case clk.reads == before && i < 256:
			t.Fatalf("admission %d of the window was not timed", i+1)
		case clk.reads == before:
			untimed++
		}
	}
	if untimed == 0 {
		t.Fatalf("admissions 257 to 260 were all timed: the window does not sample (the test needs a stride above 1)")
	}
}

// The stride of the sample follows the window's own rate: a window whose
// calls come far faster than the last one's (here 9900 in 990ms, after a
// window of 10) still times about 512 of them, not all.
func TestSampleFollowsTheWindowsRate(t *testing.T) {
	clk := &countingClock{Fake: clock.NewFake()}
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(clk), adaptive.WithAlgorithm(rec), adaptive.WithMinLimit(1000), adaptive.WithMaxLimit(1000),
		adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
	for range 10 {
		if err := call(lim, clk.Fake, time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	if err := call(lim, clk.Fake, 0, context.Canceled); err != nil { // ends the first window
		t.Fatal(err)
	}
	before := clk.reads
	for range 99 { // 100 calls every 10ms
		ps := hold(t, lim, 100)
		clk.Advance(10 * time.Millisecond)
		for _, p := range ps {
			p.Done(nil)
		}
	}
	if len(rec.windows) != 1 {
		t.Fatalf("%d windows ended, want 1", len(rec.windows))
	}
	// 256 timed calls, then one in about 10000/256: two readings each.
	if reads, want := clk.reads-before, 2*(256+(9900-256)/39); reads > 2*want || reads < want*3/4 {
		t.Fatalf("9900 calls in a window after one of 10 read the clock %d times, want about %d", reads, want)
	}
}

// The stride is projected again at each timed admission, not only at the
// window's start: a window whose calls come slowly, then in a rush, times
// far fewer of the rush than one in one.
func TestSampleFollowsARateThatRisesWithinTheWindow(t *testing.T) {
	clk := &countingClock{Fake: clock.NewFake()}
	rec := &recorder{}
	lim := adaptive.New(adaptive.WithClock(clk), adaptive.WithAlgorithm(rec), adaptive.WithMinLimit(1000), adaptive.WithMaxLimit(1000),
		adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
	for range 10 {
		if err := call(lim, clk.Fake, time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	if err := call(lim, clk.Fake, 0, context.Canceled); err != nil { // ends the first window
		t.Fatal(err)
	}
	before := clk.reads
	for range 300 { // one call every 3ms
		if err := call(lim, clk.Fake, 3*time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
	}
	for range 9 { // then 9000 calls in a rush
		ps := hold(t, lim, 1000)
		for _, p := range ps {
			p.Done(nil)
		}
	}
	if len(rec.windows) != 1 {
		t.Fatalf("%d windows ended, want 1", len(rec.windows))
	}
	if reads := clk.reads - before; reads > 5000 {
		t.Fatalf("300 slow calls and 9000 fast ones read the clock %d times, want far fewer than 2 × 9300", reads)
	}
}
