package adaptive_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// timedAdmissions starts a window after one of 900 calls (a stride of one
// in 3), advances the clock by into, and then admits n calls at that
// instant. It returns the numbers (from 1) of the admissions past the
// first 256 that read the clock.
func timedAdmissions(t *testing.T, into time.Duration, n int) []int {
	t.Helper()
	clk := &countingClock{Fake: clock.NewFake()}
	lim := adaptive.New(adaptive.WithClock(clk), adaptive.WithAlgorithm(&recorder{}), adaptive.WithInitial(300), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
	for range 900 {
		if err := call(lim, clk.Fake, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	if err := call(lim, clk.Fake, 0, context.Canceled); err != nil { // ends the window of 900
		t.Fatal(err)
	}
	clk.Advance(into)
	var ps []*adaptive.Permit
	defer func() {
		for _, p := range ps {
			p.Done(context.Canceled)
		}
	}()
	var timed []int
	for i := range n {
		before := clk.reads
		ps = append(ps, hold(t, lim, 1)[0])
		if clk.reads != before && i >= 256 {
			timed = append(timed, i+1)
		}
	}
	return timed
}

// A window's rate is projected from the time it has lasted: at its very
// start (no time elapsed) there is no rate to project, and the stride
// stays the last window's, one in 3 after 900 calls.
func TestSampleStrideAtTheWindowsStartIsTheLastWindows(t *testing.T) {
	if diff := cmp.Diff([]int{258, 261, 264, 267, 270}, timedAdmissions(t, 0, 270)); diff != "" {
		t.Errorf("timed admissions past the 256th mismatch (-want +got):\n%s", diff)
	}
}

// 258 admissions in 1ns project a rate far above anything a window can
// time: after the 258th (timed, one in 3) no admission of the window is.
func TestSampleStrideFollowsARateOfOneNanosecond(t *testing.T) {
	if diff := cmp.Diff([]int{258}, timedAdmissions(t, time.Nanosecond, 270)); diff != "" {
		t.Errorf("timed admissions past the 256th mismatch (-want +got):\n%s", diff)
	}
}

// A Permit must not be copied: ending a copy as well as the original gives
// back a slot that is not in flight, which the limiter refuses with a
// panic rather than wrap its count of calls in flight into its limit.
func TestDoneOfACopyPanics(t *testing.T) {
	lim := adaptive.New(adaptive.WithInitial(3))
	p, err := lim.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	q := new(adaptive.Permit) // a copy, made where go vet does not see it
	reflect.ValueOf(q).Elem().Set(reflect.ValueOf(&p).Elem())
	p.Done(nil)
	defer func() {
		got, _ := recover().(string)
		if want := "adaptive: Done without a call in flight"; got != want {
			t.Errorf("Done of a copy panicked with %q, want %q", got, want)
		}
		if s := lim.Stats(); s.Limit != 3 || s.InFlight != 0 {
			t.Errorf("after the panic: %+v, want limit 3 and nothing in flight", s)
		}
	}()
	q.Done(nil)
}
